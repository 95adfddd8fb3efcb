package parallel_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/parallel/paralleltest"
	par "github.com/shoal-ml/shoal/domain/parallel"
)

// A rank whose node is preempted in the middle costs only the
// mini-batch it had in flight: what it finished (rows and files) is
// kept, the server gives its lease back, and another rank scores the
// rest without running a finished mini-batch again.
func TestPreemptedRankCostsOnlyItsMiniBatchInFlight(t *testing.T) {
	l, srv := paralleltest.New(t)
	in := inputFiles(t, 6)
	sp := spec("score.py")
	sp.MiniBatchSize, sp.AppendRowTo = "1", "${{outputs.scores}}"
	script := scoreScript + `
import time
_run = run
def run(mini_batch):
    if sys.argv[-1] == "--stall" and mini_batch[0].endswith("f02.txt"):
        time.sleep(600)
    return _run(mini_batch)
`
	mk := func(rank int, args ...string) rankRun {
		dir := t.TempDir()
		return rankRun{rank: rank, nodes: 2, spec: sp, input: in, code: map[string]string{"score.py": script},
			outputs: []string{"scores", "extra"}, dir: dir,
			args: append([]string{"--out", filepath.Join(dir, "outputs", "extra")}, args...)}
	}
	// A guard against a rank that never reaches the stalling mini-batch,
	// not a measure.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, _ := mk(1, "--stall").command(ctx, t, srv.URL, l.Token)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for {
		log, _, _ := l.Snapshot()
		if slices.Contains(log, "complete 1 done") && log[len(log)-1] == "lease r1 max 1" {
			l.Mu.Lock()
			leased := l.State[2] == "leased"
			l.Mu.Unlock()
			if leased {
				break
			}
		}
		if ctx.Err() != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("rank 1 never leased mini-batch 2: %v", log)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The node goes: its processes end at once, and the server gives
	// back what it held.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	if got := l.Release(1); !slices.Equal(got, []int{2}) {
		t.Fatalf("released %v, want [2]", got)
	}
	r0 := mk(0).run(t, srv.URL, l.Token)
	if r0.code != 0 {
		t.Fatalf("rank 0 exited %d:\n%s", r0.code, r0.out)
	}
	_, completes, _ := l.Snapshot()
	runs := map[int][]int{}
	for _, c := range completes {
		if c.Outcome == par.OutcomeDone {
			runs[c.Index] = append(runs[c.Index], c.Rank)
		}
	}
	for i := range 6 {
		want := []int{0}
		if i < 2 {
			want = []int{1}
		}
		if !slices.Equal(runs[i], want) {
			t.Errorf("mini-batch %d finished by ranks %v, want %v", i, runs[i], want)
		}
	}
	var want strings.Builder
	for i := range 6 {
		fmt.Fprintf(&want, "f%02d.txt %d\n", i, i)
	}
	if got := read(t, filepath.Join(r0.outDir, "scores", "parallel_run_step.txt")); got != want.String() {
		t.Errorf("rows:\n%s\nwant:\n%s", got, want.String())
	}
	// What rank 1 wrote for its finished mini-batches reached rank 0.
	for _, f := range []string{"f00.txt.seen", "f01.txt.seen", "f05.txt.seen"} {
		if _, err := os.Stat(filepath.Join(r0.outDir, "extra", f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
