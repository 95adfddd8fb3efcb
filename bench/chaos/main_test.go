package main

import (
	"flag"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// --long gives the full suite's values only to the flags not given: an
// explicit --trials is kept, and --trials alone means that many full
// trials (the issue's `bench/chaos --trials 20`).
func TestLongSetsOnlyFlagsNotGiven(t *testing.T) {
	for _, c := range []struct {
		args   []string
		trials int
		jobs   int
		every  time.Duration
	}{
		{nil, 20, 1000, 2 * time.Second},
		{[]string{"--trials", "20"}, 20, 1000, 2 * time.Second},
		{[]string{"--long"}, 20, 1000, 2 * time.Second},
		{[]string{"--long", "--trials", "5"}, 5, 1000, 2 * time.Second},
		{[]string{"--trials", "5", "--long"}, 5, 1000, 2 * time.Second},
		{[]string{"--long", "--jobs", "40", "--every", "1s"}, 20, 40, time.Second},
		{[]string{"--trials", "1", "--jobs", "40", "--every", "1s"}, 1, 40, time.Second},
	} {
		fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
		o := defineFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		applyLong(fs, o)
		if *o.trials != c.trials || *o.jobs != c.jobs || *o.every != c.every {
			t.Errorf("%q: %d trials of %d jobs, a fault every %s; want %d of %d, %s", c.args, *o.trials, *o.jobs, *o.every, c.trials, c.jobs, c.every)
		}
	}
}

// A failed run removes the server binary it built, and never the
// directory of a binary given with --bin (it may be ~/.local/bin).
func TestRunRemovesOnlyItsOwnBuild(t *testing.T) {
	failing := func(string, *rand.Rand, int) trialResult {
		return trialResult{faults: map[string]int{}, violations: []string{"a violation"}}
	}
	defer func(b string, n int) { *bin, *trials = b, n }(*bin, *trials)
	*trials = 1

	mine := filepath.Join(t.TempDir(), "bin")
	os.MkdirAll(mine, 0o755)
	os.WriteFile(filepath.Join(mine, "shoal"), []byte("x"), 0o755)
	os.WriteFile(filepath.Join(mine, "other-tool"), []byte("x"), 0o755)
	*bin = filepath.Join(mine, "shoal")
	if code := run(func(string) string { t.Fatal("built although --bin was given"); return "" }, failing); code != 1 {
		t.Errorf("a run with a violation exited %d, want 1", code)
	}
	if _, err := os.Stat(filepath.Join(mine, "other-tool")); err != nil {
		t.Errorf("the directory of --bin lost its files: %v", err)
	}

	*bin = ""
	var built string
	if code := run(func(dir string) string {
		built = dir
		p := filepath.Join(dir, "shoal")
		os.WriteFile(p, []byte("x"), 0o755)
		return p
	}, failing); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if _, err := os.Stat(built); !os.IsNotExist(err) {
		t.Errorf("the directory it built into is still there: %v", err)
	}
}

// checkRecord finds overlaps by the lock and by the timestamps, and a
// completed attempt without its end.
func TestCheckRecord(t *testing.T) {
	for _, c := range []struct {
		name, record, final string
		want                []string
	}{
		{"one after the other", "start a 100\nalive a 200\nend a 300\nstart b 400\nalive b 500\nend b 600\n", "b", nil},
		{"killed, then the next", "start a 100\nalive a 200\nstart b 400\nend b 600\n", "b", nil},
		{"lock held", "start a 100\nalive a 200\nstart b 400\nheld b 401\nend b 600\n", "b", []string{"found the lock"}},
		{"alive after the next started", "start a 100\nstart b 150\nalive a 200\nend b 600\n", "b", []string{"a was still running 50ms after attempt b"}},
		{"completed without an end", "start a 100\nalive a 200\n", "a", []string{"record: attempt a completed"}},
		{"the server's final attempt never ran", "start a 100\nend a 200\n", "b", []string{"record: attempt b completed"}},
	} {
		// Times in ms for the reader.
		rec := ""
		for _, l := range strings.Split(strings.TrimSpace(c.record), "\n") {
			f := strings.Fields(l)
			ms, _ := time.ParseDuration(f[2] + "ms")
			rec += f[0] + " " + f[1] + " " + strconv.FormatInt(ms.Nanoseconds(), 10) + "\n"
		}
		got := checkRecord([]byte(rec), c.final)
		if len(got) != len(c.want) {
			t.Errorf("%s: %q, want %d problems like %q", c.name, got, len(c.want), c.want)
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], c.want[i]) {
				t.Errorf("%s: %q, want %q", c.name, got[i], c.want[i])
			}
		}
	}
}

// The recorded job's command, run by bash as an agent runs it: a second
// attempt started while the first runs finds its lock held; one started
// after the first was killed with SIGKILL (no end line) does not.
func TestRecordedCommandProvesOverlaps(t *testing.T) {
	dir := t.TempDir()
	attempt := func(id string, ticks int) *exec.Cmd {
		cmd := exec.Command("bash", "-c", recordedCommand(dir, ticks))
		cmd.Env = append(os.Environ(), "SHOAL_JOB_NAME=j", "SHOAL_ATTEMPT_ID="+id)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	record := func() string { b, _ := os.ReadFile(filepath.Join(dir, "j")); return string(b) }
	// waitFor waits until the record has a line (no deadline: the test's
	// own timeout bounds it).
	waitFor := func(line string) {
		for !strings.Contains(record(), line) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	kill := func(cmd *exec.Cmd) {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}

	// a runs; b starts meanwhile.
	a := attempt("a", 1000)
	waitFor("alive a")
	b := attempt("b", 1)
	waitFor("held b")
	kill(a)
	if err := b.Wait(); err != nil {
		t.Fatal(err)
	}
	// Under load a's next "alive" line can also land after b's start (a
	// second proof, listed first): the lock's proof must be among them.
	if p := checkRecord([]byte(record()), "b"); !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, "found the lock") }) {
		t.Errorf("overlapping attempts: problems %q; record:\n%s", p, record())
	}

	// c was killed before d started: no overlap.
	os.Remove(filepath.Join(dir, "j"))
	c := attempt("c", 1000)
	waitFor("alive c")
	kill(c)
	d := attempt("d", 2)
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	if p := checkRecord([]byte(record()), "d"); len(p) != 0 {
		t.Errorf("sequential attempts: problems %q; record:\n%s", p, record())
	}
}

// checkRuns finds a rank of one attempt run twice, a process of an
// attempt the servers never recorded, and a completed attempt that never
// ran; retries, gangs and a killed attempt are no problem.
func TestCheckRuns(t *testing.T) {
	for _, c := range []struct {
		name, runs string
		attempts   []string
		final      string
		want       []string
	}{
		{"one run", "run a 0\n", []string{"a"}, "a", nil},
		{"a gang", "run a 0\nrun a 1\n", []string{"a"}, "a", nil},
		{"retried", "run a 0\nrun b 0\n", []string{"a", "b"}, "b", nil},
		{"failed, never completed", "run a 0\nrun b 0\nrun c 0\n", []string{"a", "b", "c"}, "", nil},
		{"cancelled before it ran", "", []string{"a"}, "", nil},
		{"one attempt run twice", "run a 0\nrun a 0\n", []string{"a"}, "a", []string{"attempt a rank 0 ran 2 times"}},
		{"a gang's rank run twice", "run a 0\nrun a 1\nrun a 1\n", []string{"a"}, "a", []string{"attempt a rank 1 ran 2 times"}},
		{"an attempt no server recorded", "run a 0\nrun x 0\n", []string{"a"}, "a", []string{"attempt x, which the servers have no record of"}},
		{"completed, never ran", "run a 0\n", []string{"a", "b"}, "b", []string{"attempt b completed the job on the servers but no process of it ran"}},
		{"garbage", "run a\n", []string{"a"}, "", []string{"runs: unreadable line"}},
	} {
		got := checkRuns([]byte(c.runs), c.attempts, c.final)
		if len(got) != len(c.want) {
			t.Errorf("%s: %q, want %d problems like %q", c.name, got, len(c.want), c.want)
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], c.want[i]) {
				t.Errorf("%s: %q, want %q", c.name, got[i], c.want[i])
			}
		}
	}
}

// checkAccounted: each submitted job listed once, no stranger.
func TestCheckAccounted(t *testing.T) {
	sub := []string{"j1", "j2", "j3"}
	if p := checkAccounted(sub, []string{"j3", "j1", "j2"}); len(p) != 0 {
		t.Errorf("all once: %q", p)
	}
	// A lost job is counted by the caller, not here.
	if p := checkAccounted(sub, []string{"j1", "j2"}); len(p) != 0 {
		t.Errorf("one missing: %q", p)
	}
	p := checkAccounted(sub, []string{"j1", "j2", "j2", "j3", "x"})
	if len(p) != 2 || !strings.Contains(p[0], "j2 is listed 2 times") || !strings.Contains(p[1], "x is listed, but was never submitted") {
		t.Errorf("a double and a stranger: %q", p)
	}
}

// The run marker, run by bash as an agent runs a job: each process of an
// attempt's rank adds its line before the job's own command runs (even
// one that fails), so a second process of one attempt is seen.
func TestMarkedCommandMarksEachRun(t *testing.T) {
	dir := t.TempDir()
	runAs := func(attempt, rank, command string) {
		cmd := exec.Command("bash", "-c", markedCommand(dir, command))
		cmd.Env = append(os.Environ(), "SHOAL_JOB_NAME=j", "SHOAL_ATTEMPT_ID="+attempt, "SHOAL_NODE_RANK="+rank)
		cmd.Run()
	}
	runAs("a", "0", "exit 3")
	runAs("b", "0", "true")
	runAs("b", "1", "true")
	b, err := os.ReadFile(filepath.Join(dir, "j.runs"))
	if err != nil {
		t.Fatal(err)
	}
	if p := checkRuns(b, []string{"a", "b"}, "b"); len(p) != 0 {
		t.Errorf("a retry and a gang: %q\n%s", p, b)
	}
	runAs("b", "1", "true")
	b, _ = os.ReadFile(filepath.Join(dir, "j.runs"))
	if p := checkRuns(b, []string{"a", "b"}, "b"); len(p) != 1 || !strings.Contains(p[0], "attempt b rank 1 ran 2 times") {
		t.Errorf("b's rank 1 twice: %q\n%s", p, b)
	}
}

// The proxy spreads connections over the servers in turn and skips one
// that refuses (killed): its connections go to the others.
func TestProxySpreadsAndSkipsADeadServer(t *testing.T) {
	var addrs []string
	var ls []net.Listener
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		addrs = append(addrs, l.Addr().String())
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Write([]byte(l.Addr().String()))
				c.Close()
			}
		}()
	}
	p := newProxy(addrs...)
	who := func() string {
		c, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		return string(b)
	}
	got := map[string]int{}
	for range 4 {
		got[who()]++
	}
	if got[addrs[0]] != 2 || got[addrs[1]] != 2 {
		t.Errorf("4 connections over two servers: %v", got)
	}
	ls[0].Close()
	for range 4 {
		if w := who(); w != addrs[1] {
			t.Errorf("with the first server down, a connection reached %q", w)
		}
	}
	if s := p.spread(); s != "2/6" {
		t.Errorf("spread %q, want 2/6", s)
	}
}

// On SQLite one server and the original faults; on PostgreSQL two
// servers unless --servers says otherwise, the leader's kill first.
func TestStoreFlags(t *testing.T) {
	defer func(st string, n int) { *store, *opts.servers = st, n }(*store, *opts.servers)
	for _, c := range []struct {
		store   string
		servers int
		want    int
		err     string
	}{
		{"sqlite", 0, 1, ""},
		{"postgres", 0, 2, ""},
		{"postgres", 3, 3, ""},
		{"sqlite", 2, 0, "SQLite has one server"},
		{"mysql", 0, 0, "sqlite or postgres"},
	} {
		*store, *opts.servers = c.store, c.servers
		err := checkStore()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s ×%d: %v, want %q", c.store, c.servers, err, c.err)
			}
			continue
		}
		if err != nil || servers() != c.want {
			t.Errorf("%s ×%d: %d servers (%v), want %d", c.store, c.servers, servers(), err, c.want)
		}
	}
	if k := kindsOf("postgres"); k[0] != killLeader || len(k) != len(kinds) || k[1] != killAgent {
		t.Errorf("postgres kinds %q", k)
	}
	if k := kindsOf("sqlite"); k[0] != killServer {
		t.Errorf("sqlite kinds %q", k)
	}
}

// With --baseline-bin every trial runs on both binaries, alternating
// which goes first, each arm drawing the same workload and faults from
// the seed; only the binary under test's failures fail the run.
func TestRunWithBaselineRunsBothArmsAlike(t *testing.T) {
	defer func(b, bb string, n int) { *bin, *baselineBin, *trials = b, bb, n }(*bin, *baselineBin, *trials)
	dir := t.TempDir()
	*bin, *baselineBin, *trials = filepath.Join(dir, "new"), filepath.Join(dir, "old"), 3
	var order []string
	draws := map[string][]uint64{}
	trial := func(b string, rng *rand.Rand, n int) trialResult {
		order = append(order, filepath.Base(b))
		draws[filepath.Base(b)] = append(draws[filepath.Base(b)], rng.Uint64())
		r := trialResult{faults: map[string]int{}}
		if filepath.Base(b) == "old" {
			r.violations = []string{"the baseline's own"}
		}
		return r
	}
	if code := run(func(string) string { t.Fatal("built although --bin was given"); return "" }, trial); code != 0 {
		t.Errorf("only the baseline failed, exit %d, want 0", code)
	}
	if got := strings.Join(order, ","); got != "old,new,new,old,old,new" {
		t.Errorf("order %s", got)
	}
	if !slices.Equal(draws["old"], draws["new"]) {
		t.Errorf("the arms drew differently: %v", draws)
	}
}
