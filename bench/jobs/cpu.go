package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of /proc's CPU times (USER_HZ): 100 on Linux.
const clockTick = 10 * time.Millisecond

// cpuSample is where the machine's CPU went up to a moment: the server,
// its descendants (the nodes' agents and the jobs they ran), PostgreSQL's
// processes, this bench, and the whole machine (busy and all).
type cpuSample struct {
	at                              time.Time
	server, agents, postgres, bench time.Duration
	// agentsOwn is the agents' own part of agents (without the job
	// processes they reaped).
	agentsOwn               time.Duration
	machineBusy, machineAll time.Duration
	ok                      bool
}

// sampleCPU reads the CPU times of the processes of a run from /proc
// (Linux only; ok is false elsewhere); pgPID is the run's PostgreSQL
// postmaster (0: none), whose backends are its children: another
// PostgreSQL on the machine is not counted.
func sampleCPU(serverPID, pgPID int) cpuSample {
	s := cpuSample{at: time.Now()}
	type proc struct {
		ppid      int
		comm      string
		own, kids time.Duration
	}
	procs := map[int]proc{}
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ... utime stime cutime cstime: the fields
		// after the parenthesis, which a comm may contain.
		line := string(b)
		open, close := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
		if open < 0 || close < open {
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(line[:open]))
		f := strings.Fields(line[close+1:])
		if len(f) < 15 {
			continue
		}
		num := func(i int) time.Duration { n, _ := strconv.ParseInt(f[i], 10, 64); return time.Duration(n) * clockTick }
		ppid, _ := strconv.Atoi(f[1])
		procs[pid] = proc{ppid: ppid, comm: line[open+1 : close], own: num(11) + num(12), kids: num(13) + num(14)}
	}
	sp, found := procs[serverPID]
	if !found {
		return s
	}
	s.server = sp.own
	for pid, p := range procs {
		if pgPID > 0 && (pid == pgPID || p.ppid == pgPID) {
			s.postgres += p.own + p.kids
			continue
		}
		// A descendant of the server: its agents, and what they ran and
		// reaped (cutime).
		for q, hops := p.ppid, 0; q > 1 && hops < 16; hops++ {
			if q == serverPID {
				s.agents += p.own + p.kids
				if p.ppid == serverPID {
					// An agent (the local provider's child): its own
					// CPU, without the jobs it reaped.
					s.agentsOwn += p.own
				}
				break
			}
			parent, ok := procs[q]
			if !ok {
				break
			}
			q = parent.ppid
		}
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.bench = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		first, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(first) // cpu user nice system idle iowait irq softirq steal ...
		for i, v := range f[1:] {
			n, _ := strconv.ParseInt(v, 10, 64)
			d := time.Duration(n) * clockTick
			s.machineAll += d
			if i != 3 && i != 4 { // idle, iowait
				s.machineBusy += d
			}
		}
	}
	s.ok = true
	return s
}

// cpuSince says, in cores, where the CPU went between two samples, and
// the server's and the agents' CPU per job of the jobs jobs that ran
// between them (the agents' with their jobs' processes, which they
// reap, and the agents' own alone, which it returns). The server's
// reaped children (agents that exited) are not counted: the nodes'
// agents live through the run.
func cpuSince(a, b cpuSample, jobs int) (line string, agentOwnMSPerJob float64) {
	if !a.ok || !b.ok {
		return "CPU: not measured (no /proc)", 0
	}
	wall := b.at.Sub(a.at).Seconds()
	cores := func(d time.Duration) float64 { return d.Seconds() / wall }
	perJob := func(d time.Duration) float64 { return d.Seconds() * 1000 / float64(max(1, jobs)) }
	out := fmt.Sprintf("CPU (cores): server %.2f, agents and their jobs %.2f, this bench's client %.2f", cores(b.server-a.server), cores(b.agents-a.agents), cores(b.bench-a.bench))
	out += fmt.Sprintf(" (per job: server %.2f ms, agents and their jobs %.2f ms, of which the agents' own %.2f ms)",
		perJob(b.server-a.server), perJob(b.agents-a.agents), perJob(b.agentsOwn-a.agentsOwn))
	if b.postgres > 0 {
		out += fmt.Sprintf(", PostgreSQL %.2f (%.2f ms per job)", cores(b.postgres-a.postgres), perJob(b.postgres-a.postgres))
	}
	// The CPU the run spent per job, all of it: on a machine whose CPU is
	// spent, its cores divided by this is the ceiling however the
	// writes are locked.
	total := (b.server - a.server) + (b.agents - a.agents) + (b.postgres - a.postgres) + (b.bench - a.bench)
	if pj := perJob(total); pj > 0 {
		out += fmt.Sprintf("; in all %.2f ms per job (%d CPUs: a ceiling of %.0f jobs/s)", pj, runtime.NumCPU(), float64(runtime.NumCPU())*1000/pj)
	}
	if all := b.machineAll - a.machineAll; all > 0 {
		out += fmt.Sprintf("; the machine %.0f%% busy", 100*float64(b.machineBusy-a.machineBusy)/float64(all))
	}
	return out, perJob(b.agentsOwn - a.agentsOwn)
}
