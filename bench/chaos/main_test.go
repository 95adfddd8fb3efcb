package main

import (
	"flag"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
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
	failing := func(*rand.Rand, int) trialResult {
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
	if p := checkRecord([]byte(record()), "b"); len(p) == 0 || !strings.Contains(p[0], "found the lock") {
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
