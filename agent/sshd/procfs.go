package sshd

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// hangupGrace is how long the processes of a hung-up session have to
// exit on SIGHUP before the ones that do not ignore it are killed.
const hangupGrace = 2 * time.Second

// Each session program is the leader of its own OS session (setsid), and
// the session id survives everything but setsid: processes the user
// moved to other process groups (the jobs of an interactive shell) are
// still found by it. Linux tells a process's session in /proc; without
// /proc only the leader's process group is reached.

// procStat reads a process's state, session id and start time (in clock
// ticks since boot) from /proc/<pid>/stat.
func procStat(pid int) (state byte, sid int, start uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	// The command name, field 2, may hold spaces and parentheses: the
	// fields that follow start after its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3, state
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0, 0, false
	}
	sid, err1 := strconv.Atoi(f[3])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, 0, false
	}
	return f[0][0], sid, start, true
}

// startTimeOf is a live process's start time.
func startTimeOf(pid int) (uint64, bool) {
	_, _, start, ok := procStat(pid)
	return start, ok
}

// sessionMembers lists the live (not zombie) processes of OS session sid.
func sessionMembers(sid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, s, _, ok := procStat(pid); ok && s == sid && state != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

// ignoresHangup says whether a process ignores SIGHUP (nohup does that).
func ignoresHangup(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
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

// signalSession sends sig to the processes of OS session sid but those
// spare says to leave. When /proc lists none and nothing is spared, the
// leader's process group is signalled instead, which needs no /proc.
// SIGKILL is repeated for a few rounds, to catch children forked while
// the list was being read.
func signalSession(sid int, sig syscall.Signal, spare func(pid int) bool) {
	if sid <= 1 {
		return // never signal every process, or init
	}
	rounds := 1
	if sig == syscall.SIGKILL {
		rounds = 5
	}
	for r := 0; r < rounds; r++ {
		members := sessionMembers(sid)
		if len(members) == 0 && r == 0 && spare == nil {
			_ = syscall.Kill(-sid, sig)
		}
		sent := 0
		for _, pid := range members {
			if spare != nil && spare(pid) {
				continue
			}
			_ = syscall.Kill(pid, sig)
			sent++
		}
		if sent == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitHangup waits, at most hangupGrace, until every process of session
// sid that does not ignore SIGHUP has exited.
func waitHangup(sid int) {
	deadline := time.Now().Add(hangupGrace)
	for time.Now().Before(deadline) {
		alive := false
		for _, pid := range sessionMembers(sid) {
			if !ignoresHangup(pid) {
				alive = true
				break
			}
		}
		if !alive {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// killLeftovers kills what finished sessions left running (session id →
// the leader's start time). A session whose id now belongs to a newer
// leader (the id was reused once the old session was empty) is not ours.
func killLeftovers(leftover map[int]uint64) {
	for sid, start := range leftover {
		if now, ok := startTimeOf(sid); ok && now != start {
			continue
		}
		signalSession(sid, syscall.SIGKILL, nil)
	}
}
