package sshd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestActiveSessionsAndLastActivity(t *testing.T) {
	f := newFixture(t)
	start := f.clock.Now()
	if n := f.srv.ActiveSessions(); n != 0 {
		t.Fatalf("ActiveSessions = %d at start", n)
	}
	if got := f.srv.LastActivity(); !got.Equal(start) {
		t.Fatalf("LastActivity = %v at start, want the start %v", got, start)
	}
	opened := start.Add(time.Hour)
	f.clock.Set(opened)
	marker := filepath.Join(f.dir, "pid")
	cmd, _ := f.background(nil, "echo $$ > "+marker+"; read line; echo got $line")
	readPID(t, marker)
	if n := f.srv.ActiveSessions(); n != 1 {
		t.Fatalf("ActiveSessions = %d with one session open, want 1", n)
	}
	if got := f.srv.LastActivity(); !got.Equal(opened) {
		t.Fatalf("LastActivity = %v with a session just opened, want %v", got, opened)
	}
	closed := opened.Add(time.Hour)
	f.clock.Set(closed)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	eventually(t, 10*time.Second, func() bool { return f.srv.ActiveSessions() == 0 }, "ActiveSessions = %d after the client left", f.srv.ActiveSessions())
	eventually(t, 10*time.Second, func() bool { return f.srv.LastActivity().Equal(closed) }, "LastActivity = %v after the client left, want %v", f.srv.LastActivity(), closed)
}

// TestCloseKillsSessionProcesses: Close ends what the sessions run,
// jobs moved to another process group and what a finished session left
// behind on purpose included (the instance is stopping).
func TestCloseKillsSessionProcesses(t *testing.T) {
	f := newFixture(t)
	leftover := filepath.Join(f.dir, "leftover")
	r := f.ssh("nohup sleep 1000 >/dev/null 2>&1 & echo $! > " + leftover)
	if r.code != 0 {
		t.Fatalf("exit %d, %s", r.code, r.err)
	}
	left := readPID(t, leftover)
	t.Cleanup(func() { _ = syscall.Kill(left, syscall.SIGKILL) })
	time.Sleep(100 * time.Millisecond)
	if !alive(left) {
		t.Fatal("a nohup job of a finished session did not survive its session")
	}

	shell, job := filepath.Join(f.dir, "shell"), filepath.Join(f.dir, "job")
	f.background(nil, "set -m; sleep 1000 & echo $! > "+job+"; echo $$ > "+shell+"; exec sleep 1000")
	pids := []int{readPID(t, shell), readPID(t, job), left}
	for _, pid := range pids {
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	}
	if n := f.srv.ActiveSessions(); n != 1 {
		t.Fatalf("ActiveSessions = %d with one session open, want 1", n)
	}
	if err := f.srv.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		eventually(t, 5*time.Second, func() bool { return !alive(pid) }, "process %d survived Close", pid)
	}
	if n := f.srv.ActiveSessions(); n != 0 {
		t.Fatalf("ActiveSessions = %d after Close", n)
	}
	if err := f.srv.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

// TestHangupEndsSession: when the client goes away while a command runs,
// the session is hung up (SIGHUP, then SIGKILL for those that do not
// ignore it); nohup jobs survive as on a machine.
func TestHangupEndsSession(t *testing.T) {
	f := newFixture(t)
	shell, job, stubborn, nohup := filepath.Join(f.dir, "shell"), filepath.Join(f.dir, "job"), filepath.Join(f.dir, "stubborn"), filepath.Join(f.dir, "nohup")
	cmd, _ := f.background(nil, strings.Join([]string{
		"sleep 1000 & echo $! > " + job,
		"sh -c 'trap \"echo hup\" HUP; while :; do sleep 0.1; done' & echo $! > " + stubborn,
		"nohup sleep 1000 >/dev/null 2>&1 & echo $! > " + nohup,
		"echo $$ > " + shell,
		"wait",
	}, "; "))
	ps := map[string]int{"shell": readPID(t, shell), "job": readPID(t, job), "stubborn": readPID(t, stubborn), "nohup": readPID(t, nohup)}
	for _, pid := range ps {
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	}
	// nohup ignores SIGHUP only once it runs: a hangup before that is a
	// hangup before the job was nohup'd.
	eventually(t, 10*time.Second, func() bool { return hupIgnored(ps["nohup"]) }, "nohup (pid %d) never ignored SIGHUP", ps["nohup"])
	_ = cmd.Process.Kill() // the client vanishes
	for _, name := range []string{"shell", "job", "stubborn"} {
		eventually(t, 10*time.Second, func() bool { return !alive(ps[name]) }, "the %s (pid %d) survived the hangup", name, ps[name])
	}
	if !alive(ps["nohup"]) {
		t.Fatal("a nohup job did not survive the hangup")
	}
	eventually(t, 5*time.Second, func() bool { return f.srv.ActiveSessions() == 0 }, "ActiveSessions = %d after the hangup", f.srv.ActiveSessions())
	f.srv.Close()
	eventually(t, 5*time.Second, func() bool { return !alive(ps["nohup"]) }, "the nohup job survived Close")
}

func TestExitBySignal(t *testing.T) {
	f := newFixture(t)
	// OpenSSH reports a remote death by signal as exit 255, and says so.
	r := f.ssh("kill -TERM $$")
	if r.code != 255 {
		t.Fatalf("exit %d, stderr %q; want 255", r.code, r.err)
	}
	if r := f.ssh("exit 0"); r.code != 0 {
		t.Fatalf("exit %d, %s", r.code, r.err)
	}
}

// TestHangupOfNohupCommand: a command that ignores the hangup outlives
// its connection, which no longer counts as a session; Close still ends
// it.
func TestHangupOfNohupCommand(t *testing.T) {
	f := newFixture(t)
	marker := filepath.Join(f.dir, "pid")
	cmd, _ := f.background(nil, "echo $$ > "+marker+"; exec nohup sleep 1000")
	pid := readPID(t, marker)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	eventually(t, 5*time.Second, func() bool { return f.srv.ActiveSessions() == 1 }, "ActiveSessions = %d with the command running", f.srv.ActiveSessions())
	// The shell wrote its pid before it became nohup: a hangup before
	// nohup ignores SIGHUP ends it, as it would any shell (under CI's
	// load the client was killed in between).
	eventually(t, 10*time.Second, func() bool { return hupIgnored(pid) }, "pid %d never ignored SIGHUP", pid)
	_ = cmd.Process.Kill()
	eventually(t, 5*time.Second, func() bool { return f.srv.ActiveSessions() == 0 }, "ActiveSessions = %d once the client is gone", f.srv.ActiveSessions())
	if !alive(pid) {
		t.Fatal("the nohup command did not survive the hangup")
	}
	f.srv.Close()
	eventually(t, 5*time.Second, func() bool { return !alive(pid) }, "the nohup command survived Close")
}

// hupIgnored says whether process pid ignores SIGHUP (its SigIgn mask).
func hupIgnored(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(uint(syscall.SIGHUP)-1)) != 0
		}
	}
	return false
}
