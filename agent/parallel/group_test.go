package parallel_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/parallel/paralleltest"
)

// The agent ends a rank by signalling its process group (agent/runner):
// the entry script's workers are in that group and end with it, never
// left running the user's code after the rank ended.
func TestWorkersEndWithTheRanksProcessGroup(t *testing.T) {
	l, srv := paralleltest.New(t)
	pidFile := filepath.Join(t.TempDir(), "worker.pid")
	hang := `
import os, sys, time
def init(): pass
def run(mb):
    with open(sys.argv[1] + ".tmp", "w") as f: f.write(str(os.getpid()))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(600)
`
	// A guard against a driver that never starts its worker, not a
	// measure.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, _ := rankRun{spec: spec("hang.py"), input: inputFiles(t, 1), code: map[string]string{"hang.py": hang},
		args: []string{pidFile}}.command(ctx, t, srv.URL, l.Token)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for pid == 0 {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if ctx.Err() != nil {
			cmd.Process.Kill()
			t.Fatal("the worker never ran the mini-batch")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != cmd.Process.Pid {
		t.Errorf("the worker is in process group %d (%v), want the rank's %d", pgid, err, cmd.Process.Pid)
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	for !ended(pid) {
		if ctx.Err() != nil {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("the worker outlived its rank")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ended reports whether pid no longer runs: gone, or a zombie that its
// new parent (whatever reaps orphans here) has not reaped yet.
func ended(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}
