package local_test

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/procmark"
	"github.com/shoal-ml/shoal/provider/local"
	"github.com/shoal-ml/shoal/provider/providertest"
)

// startNodeProcess starts what an agent's job or instance leaves behind:
// a process in a group of its own, marked as node id's with work dir dir.
func startNodeProcess(t *testing.T, id, dir string) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.Env = procmark.Node(id, dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait() // reaped, so that a killed one is gone, not a zombie
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd.Process.Pid
}

// Releasing a node kills what its jobs and sessions left running, and
// nothing of another server's node with the same ID on the same host: an
// instance's node ID comes from its name ("ci-local-myinstance"), and the
// end-to-end suite's servers, side by side, killed each other's notebooks
// and SSH sessions when only the ID was compared.
func TestReleaseKillsOnlyItsOwnNodesProcesses(t *testing.T) {
	const id = "ci-local-myinstance"
	mine := newProvider(t, local.Config{StopGrace: time.Second})
	theirs := newProvider(t, local.Config{StopGrace: time.Second})
	a := provision(t, mine, id, 0)
	b := provision(t, theirs, id, 0)
	if !started(a.ProviderRef, 10*time.Second) || !started(b.ProviderRef, 10*time.Second) {
		t.Fatal("agents did not start")
	}
	left := startNodeProcess(t, id, a.ProviderRef)
	other := startNodeProcess(t, id, b.ProviderRef)

	providertest.MustRelease(t, mine, a)
	waitGone(t, left, 5*time.Second)
	time.Sleep(100 * time.Millisecond)
	if !running(other) {
		t.Fatal("releasing one server's node killed another server's node's process of the same ID")
	}
	if !running(readPID(b.ProviderRef)) {
		t.Fatal("the other server's agent is gone")
	}
}
