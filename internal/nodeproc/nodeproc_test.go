package nodeproc_test

import (
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/shoal-ml/shoal/internal/nodeproc"
)

// start runs a sleep with env added to ours and returns its pid.
func start(t *testing.T, env ...string) int {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// A node's processes are found by its ID and work dir together: another
// server's node with the same ID (an instance's ID comes from its name),
// a longer ID or a dir below this one are other nodes.
func TestFindTellsNodesWithTheSameIDApart(t *testing.T) {
	dir := t.TempDir()
	mine := start(t, nodeproc.Env("ci-local-myinstance", dir+"/a")...)
	other := start(t, nodeproc.Env("ci-local-myinstance", dir+"/b")...)
	longer := start(t, nodeproc.Env("ci-local-myinstance2", dir+"/a")...)
	below := start(t, nodeproc.Env("ci-local-myinstance", dir+"/a/x")...)
	idOnly := start(t, nodeproc.EnvNodeID+"=ci-local-myinstance")

	got := nodeproc.Find("ci-local-myinstance", dir+"/a")
	if !slices.Contains(got, mine) {
		t.Errorf("the node's own process %d not found: %v", mine, got)
	}
	for name, pid := range map[string]int{"same ID, another dir": other, "longer ID": longer, "dir below": below, "ID without dir": idOnly} {
		if slices.Contains(got, pid) {
			t.Errorf("%s (pid %d) taken for the node's: %v", name, pid, got)
		}
	}
	if got := nodeproc.Find("", dir+"/a"); got != nil {
		t.Errorf("an empty ID matches %v", got)
	}
}
