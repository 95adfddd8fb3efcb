package parallel_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/parallel"
	"github.com/shoal-ml/shoal/agent/parallel/paralleltest"
	"github.com/shoal-ml/shoal/domain/node"
)

// The agent ends a rank by signalling its process group (agent/runner):
// the entry script's workers are in that group and end with it, never
// left running the user's code after the rank ended.
func TestWorkersEndWithTheRanksProcessGroup(t *testing.T) {
	py := python(t)
	l, srv := paralleltest.New(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "worker.pid")
	codeDir := filepath.Join(dir, "code")
	writeFiles(t, codeDir, map[string]string{"hang.py": `
import os, sys, time
def init(): pass
def run(mb):
    with open(sys.argv[1] + ".tmp", "w") as f: f.write(str(os.getpid()))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(600)
`})
	sp := spec("hang.py")
	at := &node.AgentTask{Parallel: &node.ParallelTask{Spec: sp, Path: paralleltest.Path, Token: l.Token, InputType: "uri_folder"}}
	task, err := parallel.NewTask(srv.URL, at, parallel.Paths{CodeDir: codeDir, OutputsDir: filepath.Join(dir, "outputs"),
		Inputs: map[string]string{"data": inputFiles(t, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	drv, err := parallel.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	env, _ := parallel.Env(drv, task)
	cmd := exec.Command(py, drv, pidFile)
	cmd.Dir, cmd.Env = codeDir, os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A guard against a driver that never starts its worker, not a
	// measure.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
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
