package local

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	nodekind "github.com/shoal-ml/shoal/domain/node"
)

// A released cluster node's folder stays for the retention and then
// goes (at a later release, or when a provider starts over the same
// folder); an instance's folder is its home and stays; a folder whose
// agent runs again is left alone.
func TestReleasedNodeDirsGoAfterTheirRetention(t *testing.T) {
	nodes := t.TempDir()
	mk := func(id string) string {
		dir := filepath.Join(nodes, id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "agent.log"), []byte("log"), 0o600)
		return dir
	}
	exists := func(dir string) bool { _, err := os.Stat(dir); return err == nil }
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

	p := New(Config{NodesDir: nodes, NodeDirRetention: time.Hour})
	old, recent, inst := mk("c-old"), mk("c-recent"), mk("ci-local-dev")
	p.markReleased(&nodekind.Node{ID: "c-old"}, now.Add(-2*time.Hour))
	p.markReleased(&nodekind.Node{ID: "c-recent"}, now.Add(-time.Minute))
	p.markReleased(&nodekind.Node{ID: "ci-local-dev", Role: nodekind.NodeRoleInstance}, now.Add(-2*time.Hour))
	// The later release swept: c-old was then past its hour.
	if exists(old) {
		t.Error("a folder released two hours before a later release is kept past its hour")
	}
	p.sweepReleased(now)
	if !exists(recent) || !exists(inst) {
		t.Errorf("recent %v, instance %v: want both kept", exists(recent), exists(inst))
	}
	if _, err := os.Stat(filepath.Join(inst, releasedMark)); err == nil {
		t.Error("an instance's home was marked released")
	}

	// A provider started later sweeps what is past its retention.
	os.WriteFile(filepath.Join(recent, releasedMark), []byte(strconv.FormatInt(time.Now().Add(-2*time.Hour).Unix(), 10)), 0o600)
	New(Config{NodesDir: nodes, NodeDirRetention: time.Hour})
	if exists(recent) {
		t.Error("a provider's start left a folder past its retention")
	}

	// Retention of a nanosecond: gone at release.
	p = New(Config{NodesDir: nodes, NodeDirRetention: time.Nanosecond})
	now2 := mk("c-now")
	p.markReleased(&nodekind.Node{ID: "c-now"}, time.Now())
	if exists(now2) {
		t.Error("retention ~0: the folder stays after release")
	}
}
