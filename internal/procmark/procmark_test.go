package procmark_test

import (
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/procmark"
)

// start runs a sleep with exactly env (none of the test's own, which could
// carry a mark when the tests run inside a Shoal job) and returns its pid.
func start(t *testing.T, env ...string) int {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	cmd.Env = append([]string{}, env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// A node's processes are found by its ID and work dir together: another
// server's node with the same ID (an instance's ID comes from its name),
// a longer ID or a dir below this one are other nodes.
func TestFindNodeTellsNodesWithTheSameIDApart(t *testing.T) {
	dir := t.TempDir()
	mine := start(t, procmark.Node("ci-local-myinstance", dir+"/a")...)
	other := start(t, procmark.Node("ci-local-myinstance", dir+"/b")...)
	longer := start(t, procmark.Node("ci-local-myinstance2", dir+"/a")...)
	below := start(t, procmark.Node("ci-local-myinstance", dir+"/a/x")...)
	idOnly := start(t, procmark.NodeID+"=ci-local-myinstance")

	got := procmark.FindNode("ci-local-myinstance", dir+"/a")
	if !slices.Contains(got, mine) {
		t.Errorf("the node's own process %d not found: %v", mine, got)
	}
	for name, pid := range map[string]int{"same ID, another dir": other, "longer ID": longer, "dir below": below, "ID without dir": idOnly} {
		if slices.Contains(got, pid) {
			t.Errorf("%s (pid %d) taken for the node's: %v", name, pid, got)
		}
	}
	if got := procmark.FindNode("", dir+"/a"); got != nil {
		t.Errorf("an empty ID matches %v", got)
	}
	if got := procmark.Find(); got != nil {
		t.Errorf("no variables match %v", got)
	}
}

// A process that has ended but is not reaped yet (a zombie) is not found.
func TestFindLeavesZombiesOut(t *testing.T) {
	cmd := exec.Command("true")
	cmd.Env = []string{"PROCMARK_TEST=zombie-" + t.Name()}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	// Not waited for: once it exits it stays a zombie until Wait.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if got := procmark.Find("PROCMARK_TEST=zombie-" + t.Name()); len(got) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("an exited process is still found 5 s later")
}
