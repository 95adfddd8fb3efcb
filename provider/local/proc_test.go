package local

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// A pid file names a process whose command line already reads as the
// agent's: exec(2) reports success to cmd.Start before the kernel sets the
// new program's arguments, and in between /proc/<pid>/cmdline reads empty,
// so isAgent would call a just-started agent no agent (a clean-clone CI run
// saw RunningAgents miss one so). awaitExec closes that gap.
func TestAwaitExecSeesTheArguments(t *testing.T) {
	for i := range 50 {
		cmd := exec.Command("sleep", "30")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		awaitExec(pid)
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		cmd.Process.Kill()
		cmd.Wait()
		if err != nil || !bytes.Equal(b, []byte("sleep\x0030\x00")) {
			t.Fatalf("start %d: command line %q (%v) after awaitExec", i, b, err)
		}
	}
}

// An exited process that is not reaped yet, and one reaped, both read as
// not running: awaitExec stops waiting on them (a zombie's command line
// stays empty).
func TestZombieSeesAnExitedProcess(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	awaitExec(pid)
	if zombie(pid) {
		t.Fatal("a running process reads as exited")
	}
	cmd.Process.Kill()
	for range 1000 {
		if zombie(pid) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !zombie(pid) {
		t.Fatal("a killed, unreaped process reads as running")
	}
	cmd.Wait()
	if !zombie(pid) {
		t.Fatal("a reaped process reads as running")
	}
}
