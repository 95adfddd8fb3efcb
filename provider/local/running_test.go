package local_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/provider/local"
)

// After Close the agents keep running: RunningAgents names them, for the
// server to say so on exit, and notices a binary deleted under them (go
// run removes its build when it exits).
func TestRunningAgentsAfterClose(t *testing.T) {
	dataDir := t.TempDir()
	// A copy of the stub, which the test deletes once the agent runs.
	exe := filepath.Join(t.TempDir(), "shoal")
	b, err := os.ReadFile(stub)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	p := newProvider(t, local.Config{DataDir: dataDir})
	if got := p.RunningAgents(); len(got) != 0 {
		t.Fatalf("running before any node: %+v", got)
	}
	node := provision(t, p, "keeper", 0)
	if !started(node.ProviderRef, 10*time.Second) {
		t.Fatal("agent did not start")
	}
	p.Close()
	got := p.RunningAgents()
	if len(got) != 1 || got[0].NodeID != "keeper" || got[0].PID != readPID(node.ProviderRef) || got[0].ExecutableGone {
		t.Fatalf("running agents %+v; the agent: %s", got, describe(node.ProviderRef))
	}

	// A provider over the same data dir sees it too (an adopted agent), and
	// sees its binary gone.
	q := local.New(local.Config{DataDir: dataDir, Executable: exe})
	other := provision(t, q, "from-deleted", 0)
	if !started(other.ProviderRef, 10*time.Second) {
		t.Fatal("second agent did not start")
	}
	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}
	q.Close()
	byID := map[string]local.RunningAgent{}
	for _, a := range local.New(local.Config{DataDir: dataDir}).RunningAgents() {
		byID[a.NodeID] = a
	}
	if len(byID) != 2 || byID["keeper"].ExecutableGone || !byID["from-deleted"].ExecutableGone {
		t.Fatalf("running agents %+v; keeper: %s; from-deleted: %s", byID, describe(node.ProviderRef), describe(other.ProviderRef))
	}
}

// describe says what became of the agent under ref, for a failure to
// explain itself: its pid, its state and command line in /proc, its log.
func describe(ref string) string {
	pid := readPID(ref)
	stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	log, _ := os.ReadFile(filepath.Join(ref, local.LogFile))
	return fmt.Sprintf("pid %d, stat %q, cmdline %q, log %q", pid, stat, cmdline, log)
}
