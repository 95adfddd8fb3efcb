// Command testcpu runs a command (the test command, say) and tells where
// the machine's CPU went while it ran: by test binary (a process's
// nearest ancestor named *.test, `go test`'s binaries) and by the
// commands under each. The test command on 2 cores is bound by CPU, so
// what it spends is what it takes; this names the spenders.
//
// It samples /proc every --interval: a process that lives a shorter
// time is missed unless it is caught running, and processes started
// again and again (dpkg-query under podman's info, a job's `true`) are
// undercounted. The machine's whole CPU over the run (from /proc/stat)
// is printed beside the sampled sum, so the coverage is visible.
//
// Usage: go run ./bench/testcpu [--interval 1s] [--top 40] -- CMD [ARG...]
package main

import (
	"bufio"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	interval := flag.Duration("interval", time.Second, "how often /proc is read")
	top := flag.Int("top", 40, "rows of the (test binary, command) table")
	out := flag.String("out", "", "also write the tables to this file")
	flag.Parse()
	if flag.NArg() == 0 {
		log.Fatal("usage: testcpu [--interval 1s] [--top 40] [--out FILE] -- CMD [ARG...]")
	}
	w := io.Writer(os.Stdout)
	if *out != "" {
		// Made before the run, so that a bad path fails now, not after it.
		f, err := os.Create(*out)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		w = io.MultiWriter(os.Stdout, f)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	s := newSampler(clockTicks)
	startCPU, _ := machineCPU("/proc/stat")
	s.sample(readProcs("/proc"), true)
	// The wall clock is what is measured here (the run's length beside its
	// CPU), not an input to a decision: no injected clock.
	began := time.Now()
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	var runErr error
loop:
	for {
		select {
		case runErr = <-done:
			break loop
		case <-tick.C:
			s.sample(readProcs("/proc"), false)
		}
	}
	wall := time.Since(began)
	endCPU, _ := machineCPU("/proc/stat")
	s.report(w, wall, (endCPU-startCPU)/float64(clockTicks), *top)
	var exit *exec.ExitError
	if errors.As(runErr, &exit) {
		os.Exit(exit.ExitCode())
	} else if runErr != nil {
		log.Fatal(runErr)
	}
}

// clockTicks is USER_HZ, the unit of /proc's CPU times (100 on Linux).
const clockTicks = 100

// proc is one process as /proc/<pid>/stat shows it.
type proc struct {
	pid, ppid int
	comm      string
	ticks     int64 // utime + stime
	start     int64 // starttime: with pid, names one process across pid reuse
}

// parseStat reads a /proc/<pid>/stat line. The command name is between
// the first '(' and the last ')' and may hold spaces and parentheses.
func parseStat(line string) (proc, error) {
	l, r := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if l < 0 || r < l {
		return proc{}, fmt.Errorf("no command name in %q", line)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line[:l]))
	if err != nil {
		return proc{}, err
	}
	f := strings.Fields(line[r+1:])
	// state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
	// utime stime cutime cstime priority nice threads itrealvalue starttime
	if len(f) < 20 {
		return proc{}, fmt.Errorf("short stat line %q", line)
	}
	ppid, err1 := strconv.Atoi(f[1])
	ut, err2 := strconv.ParseInt(f[11], 10, 64)
	st, err3 := strconv.ParseInt(f[12], 10, 64)
	start, err4 := strconv.ParseInt(f[19], 10, 64)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return proc{}, err
	}
	return proc{pid: pid, ppid: ppid, comm: line[l+1 : r], ticks: ut + st, start: start}, nil
}

// readProcs reads every process's stat under root ("/proc"); one that
// ends while being read is left out.
func readProcs(root string) map[int]proc {
	ents, _ := os.ReadDir(root)
	out := make(map[int]proc, len(ents))
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(root + "/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if p, err := parseStat(string(b)); err == nil {
			if len(p.comm) == commLen {
				// The kernel keeps 15 bytes of a name: "parallelapi.test"
				// is "parallelapi.tes". The program's own path says.
				if argv, err := os.ReadFile(root + "/" + e.Name() + "/cmdline"); err == nil {
					arg0, _, _ := strings.Cut(string(argv), "\x00")
					if base := arg0[strings.LastIndexByte(arg0, '/')+1:]; strings.HasPrefix(base, p.comm) {
						p.comm = base
					}
				}
			}
			out[p.pid] = p
		}
	}
	return out
}

// commLen is the length of a truncated command name in /proc's stat
// (TASK_COMM_LEN less its NUL).
const commLen = 15

// machineCPU is the busy time of all CPUs in ticks, from /proc/stat's
// first line (everything but idle and iowait).
func machineCPU(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, errors.New("empty " + path)
	}
	fs := strings.Fields(sc.Text())
	var busy float64
	for i, v := range fs[1:] {
		n, _ := strconv.ParseFloat(v, 64)
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		if i >= 7 { // steal is another guest's; guest times are in user's already
			break
		}
		busy += n
	}
	return busy, nil
}

// seen is what the sampler knows of one process under one name.
type seen struct {
	comm, owner string
	base, ticks int64 // CPU before the run (or before this name), and the latest
	start       int64 // the process's start time (pid reuse tells by it)
	count       bool  // first seen after the run began
}

// sampler accumulates samples of /proc.
type sampler struct {
	hz    int
	procs map[int]*seen // by pid: the process now known under it
	done  []*seen       // processes (or names) replaced since
	n     int
}

func newSampler(hz int) *sampler { return &sampler{hz: hz, procs: map[int]*seen{}} }

// sample takes one reading; first marks the processes already running
// before the command, whose earlier CPU is not the command's.
func (s *sampler) sample(table map[int]proc, first bool) {
	s.n++
	for pid, p := range table {
		old := s.procs[pid]
		same := old != nil && old.start == p.start
		if same && old.comm == p.comm {
			old.ticks = max(old.ticks, p.ticks)
			continue
		}
		sn := &seen{comm: p.comm, owner: owner(pid, table), ticks: p.ticks, start: p.start, count: !first}
		switch {
		case first:
			sn.base = p.ticks
		case same:
			// Renamed (exec, or a kernel worker taking another job):
			// the CPU up to here was the first name's.
			sn.base = old.ticks
		}
		if old != nil {
			s.done = append(s.done, old) // a reused pid, or the name before
		}
		s.procs[pid] = sn
	}
}

// owner names the test binary a process runs under: its nearest
// ancestor (itself included) whose name ends in ".test", else "other".
func owner(pid int, table map[int]proc) string {
	for hops := 0; hops < 64; hops++ {
		p, ok := table[pid]
		if !ok {
			return "other"
		}
		if strings.HasSuffix(p.comm, ".test") {
			return p.comm
		}
		if p.ppid <= 1 {
			return "other"
		}
		pid = p.ppid
	}
	return "other"
}

// report prints CPU seconds by test binary and by (test binary, command).
func (s *sampler) report(w io.Writer, wall time.Duration, machine float64, top int) {
	type row struct {
		key   string
		secs  float64
		procs int
	}
	byOwner, byCmd := map[string]*row{}, map[string]*row{}
	var sum float64
	all := slices.Collect(maps.Values(s.procs))
	for _, p := range append(all, s.done...) {
		secs := float64(p.ticks-p.base) / float64(s.hz)
		sum += secs
		for _, r := range []struct {
			m   map[string]*row
			key string
		}{{byOwner, p.owner}, {byCmd, fmt.Sprintf("%-24s %s", p.owner, p.comm)}} {
			if r.m[r.key] == nil {
				r.m[r.key] = &row{key: r.key}
			}
			r.m[r.key].secs += secs
			if p.count {
				r.m[r.key].procs++
			}
		}
	}
	sorted := func(m map[string]*row) []*row {
		rs := make([]*row, 0, len(m))
		for _, r := range m {
			rs = append(rs, r)
		}
		slices.SortFunc(rs, func(a, b *row) int { return cmp.Or(cmp.Compare(b.secs, a.secs), strings.Compare(a.key, b.key)) })
		return rs
	}
	fmt.Fprintf(w, "== CPU while the command ran: %.0f s of wall, %.0f CPU-s busy on the machine, %.0f CPU-s sampled in %d readings (processes shorter than a reading are mostly missed)\n", wall.Seconds(), machine, sum, s.n)
	fmt.Fprintf(w, "-- by test binary (CPU-s, processes first seen during the run)\n")
	for _, r := range sorted(byOwner) {
		if r.secs >= 0.05 {
			fmt.Fprintf(w, "%9.1f %6d  %s\n", r.secs, r.procs, r.key)
		}
	}
	fmt.Fprintf(w, "-- by test binary and command\n")
	for i, r := range sorted(byCmd) {
		if i == top {
			break
		}
		fmt.Fprintf(w, "%9.1f %6d  %s\n", r.secs, r.procs, r.key)
	}
}
