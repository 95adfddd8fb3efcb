// Command parallel measures batch inference (parallel jobs) end to end
// with real processes on this host: a scoring job over a folder of files
// (10,000 by default) on 1, 2 and 4 local nodes, its throughput and its
// scaling against 1 node; Shoal's overhead per mini-batch against the
// entry script's own time; and the time to finish after one of 4 nodes
// is preempted at half-way against the same run without preemption. Each
// run starts a fresh `shoal server` (the binary given, which the local
// provider also starts as `shoal agent`) on a fresh data dir and submits
// the job with the same binary's CLI, as a user would. Run it with
// bench/parallel.sh, which builds the binary.
//
// The entry script sleeps --work-ms per file: the work of a model that
// waits on an accelerator or a service, which overlaps across nodes on
// this 2-core machine where CPU-bound work could not.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/bench/internal/benchsrv"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/internal/testhosts"
)

// script is the entry script: each file costs --work-ms, and its row
// says how long run spent on it (µs), so the bench tells the script's own
// time from Shoal's.
const script = `import argparse, os, time

def init():
    global work
    p = argparse.ArgumentParser()
    p.add_argument("--work-ms", type=float, default=0)
    a, _ = p.parse_known_args()
    work = a.work_ms / 1000.0

def run(mini_batch):
    rows = []
    for f in mini_batch:
        t0 = time.perf_counter()
        if work:
            time.sleep(work)
        rows.append("%s %d" % (os.path.basename(f), (time.perf_counter() - t0) * 1e6))
    return rows
`

// pipeline is the job: one parallel step over ./data.
const pipeline = `type: pipeline
settings:
  default_compute: azureml:%s
jobs:
  score:
    type: parallel
    inputs:
      files: {type: uri_folder, path: ./data}
    outputs:
      scores: {type: uri_file}
    input_data: ${{inputs.files}}
    mini_batch_size: "%d"
    resources: {instance_count: %d}
    max_concurrency_per_instance: %d
    retry_settings: {max_retries: 3, timeout: 600}
    task:
      type: run_function
      code: ./src
      entry_script: score.py
      program_arguments: --work-ms %g
      append_row_to: ${{outputs.scores}}
`

// result is what one run measured.
type result struct {
	nodes       int
	filesPerSec float64
	// busy is the ranks' time from start to end, summed; scriptTime the
	// entry script's own time, summed over files.
	busy, scriptTime time.Duration
	miniBatches      int
	// finish is from the job's submission to its end.
	finish time.Duration
}

func main() {
	bin := flag.String("bin", "", "the shoal binary run as the server, its agents and the CLI (required)")
	files := flag.Int("files", 10000, "files the job scores")
	batch := flag.Int("mini-batch", 10, "files per mini-batch")
	workMs := flag.Float64("work-ms", 5, "the entry script's time per file, ms (a sleep)")
	nodeList := flag.String("nodes", "1,2,4", "node counts of the throughput runs")
	runs := flag.Int("runs", 3, "runs of each measurement (medians are printed)")
	keep := flag.Bool("keep", false, "keep the runs' folders and print where")
	flag.Parse()
	if *bin == "" {
		log.Fatal("--bin is required")
	}
	var counts []int
	for _, f := range strings.Split(*nodeList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			log.Fatalf("--nodes %q: node counts such as 1,2,4", *nodeList)
		}
		counts = append(counts, n)
	}
	root, err := os.MkdirTemp("", "shoal-bench-parallel-")
	if err != nil {
		log.Fatal(err)
	}
	if *keep {
		fmt.Println("folders kept under", root)
	} else {
		defer os.RemoveAll(root)
	}
	// 0711: the nodes' job accounts pass through to their work dirs.
	_ = os.Chmod(root, 0o711)
	work := writeWork(root, *files)
	prog := &testhosts.Program{}
	defer prog.Done()
	ctx := context.Background()
	b := bench{bin: *bin, root: root, work: work, batch: *batch, workMs: *workMs}

	fmt.Printf("== %d files in mini-batches of %d, %.1f ms of work per file, %d runs each\n", *files, *batch, *workMs, *runs)
	byNodes := map[int][]result{}
	for i := 0; i < *runs; i++ {
		for _, n := range counts {
			r := b.run(ctx, fmt.Sprintf("n%d-%d", n, i), n, 1, false)
			byNodes[n] = append(byNodes[n], r)
			fmt.Printf("run %d, %d node(s): %.0f files/s, %s to finish\n", i+1, n, r.filesPerSec, r.finish.Round(time.Millisecond))
		}
	}
	one := median(byNodes[counts[0]], func(r result) float64 { return r.filesPerSec })
	fmt.Println("-- throughput (medians) and scaling against", counts[0], "node(s):")
	for _, n := range counts {
		m := median(byNodes[n], func(r result) float64 { return r.filesPerSec })
		fmt.Printf("%d node(s): %.0f files/s, %.2f× (%.2f × N; aim ≥ 0.80 × N)\n", n, m, m/one, m/one/float64(n)*float64(counts[0]))
	}
	over := median(byNodes[counts[0]], func(r result) float64 {
		return float64(r.busy-r.scriptTime) / float64(r.miniBatches) / 1e6
	})
	own := median(byNodes[counts[0]], func(r result) float64 {
		return float64(r.scriptTime) / float64(r.miniBatches) / 1e6
	})
	fmt.Printf("-- per mini-batch on %d node(s) (medians): the entry script's own %.1f ms, Shoal's overhead %.1f ms (aim ≤ 20 ms; rank start to end, listing and writing the outputs included)\n", counts[0], own, over)

	var plain, preempted []result
	for i := 0; i < *runs; i++ {
		plain = append(plain, b.run(ctx, fmt.Sprintf("p4-%d", i), 4, 1, false))
		preempted = append(preempted, b.run(ctx, fmt.Sprintf("x4-%d", i), 4, 1, true))
		fmt.Printf("run %d, 4 low-priority nodes: %s without preemption, %s with one node preempted at half-way\n", i+1,
			plain[i].finish.Round(time.Millisecond), preempted[i].finish.Round(time.Millisecond))
	}
	p := median(plain, func(r result) float64 { return r.finish.Seconds() })
	x := median(preempted, func(r result) float64 { return r.finish.Seconds() })
	fmt.Printf("-- time to finish on 4 nodes (medians): %.1f s without preemption, %.1f s with one node preempted at half-way: %.2f×\n", p, x, x/p)
}

// bench holds what every run shares.
type bench struct {
	bin, root, work string
	batch           int
	workMs          float64
}

// writeWork writes the job's folder: data/ with n files, src/score.py.
func writeWork(root string, n int) string {
	work := filepath.Join(root, "work")
	for _, d := range []string{"data", "src"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o700); err != nil {
			log.Fatal(err)
		}
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(work, "data", fmt.Sprintf("f%06d.txt", i)), []byte(strconv.Itoa(i)), 0o600); err != nil {
			log.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(work, "src", "score.py"), []byte(script), 0o600); err != nil {
		log.Fatal(err)
	}
	return work
}

// run runs the job once on a fresh server with nodes nodes (low-priority
// when preempt, which preempts one node once half the mini-batches are
// done) and measures it.
func (b *bench) run(ctx context.Context, label string, nodes, concurrency int, preempt bool) result {
	dir := filepath.Join(b.root, label)
	s, c := benchsrv.Start(b.bin, dir, "", "", false)
	defer s.Stop()
	tier := "dedicated"
	if preempt {
		tier = "low_priority"
	}
	doc, _ := json.Marshal(map[string]any{"name": "batch", "tier": tier, "min_instances": nodes, "max_instances": nodes, "idle_time_before_scale_down": 600})
	if _, _, err := c.ApplyCompute(ctx, "default", "batch", doc, ""); err != nil {
		log.Fatal(err)
	}
	waitIdle(ctx, c, nodes)
	file := filepath.Join(b.work, label+".yml")
	if err := os.WriteFile(file, fmt.Appendf(nil, pipeline, "batch", b.batch, nodes, concurrency, b.workMs), 0o600); err != nil {
		log.Fatal(err)
	}
	began := time.Now()
	out := b.cli(dir, "job", "create", "-f", file, "--query", "name", "-o", "tsv")
	step := job.PipelineChildName(strings.TrimSpace(out), "score")
	preempted := !preempt
	var j *job.Job
	for {
		var err error
		j, err = c.GetJob(ctx, "default", step)
		if err == nil && job.JobTerminal(j.Status) {
			break
		}
		if !preempted && err == nil && j.ParallelProgress != nil && j.ParallelProgress.MiniBatches > 0 &&
			j.ParallelProgress.Done*2 >= j.ParallelProgress.MiniBatches {
			atts, err := c.ListAttempts(ctx, "default", step)
			if err == nil && len(atts) > 0 && len(atts[len(atts)-1].Ranks) > 1 {
				b.cli(dir, "compute", "preempt-node", "-n", "batch", "--node", atts[len(atts)-1].Ranks[1].NodeID, "-o", "none")
				preempted = true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	finish := time.Since(began)
	if j.Status != job.JobCompleted {
		log.Fatalf("%s: step %s ended %s: %s (folders under %s)", label, step, j.Status, j.Error, dir)
	}
	r := result{nodes: nodes, finish: finish}
	if j.ParallelProgress != nil {
		r.miniBatches = j.ParallelProgress.MiniBatches
	}
	atts, err := c.ListAttempts(ctx, "default", step)
	if err != nil {
		log.Fatal(err)
	}
	var first, last time.Time
	for _, a := range atts {
		for _, rk := range a.Ranks {
			if rk.StartTime == nil || rk.EndTime == nil {
				continue
			}
			r.busy += rk.EndTime.Sub(*rk.StartTime)
			if first.IsZero() || rk.StartTime.Before(first) {
				first = *rk.StartTime
			}
			if rk.EndTime.After(last) {
				last = *rk.EndTime
			}
		}
	}
	rows := b.scriptTime(dir, step)
	r.scriptTime = rows.time
	r.filesPerSec = float64(rows.n) / last.Sub(first).Seconds()
	return r
}

// rowsSeen is what the rows file says: how many files, and the entry
// script's time on them.
type rowsSeen struct {
	n    int
	time time.Duration
}

// scriptTime downloads the step's rows and sums the script's own time.
func (b *bench) scriptTime(dir, step string) rowsSeen {
	dl := filepath.Join(dir, "download")
	b.cli(dir, "job", "download", "-n", step, "--output-name", "scores", "-p", dl)
	var seen rowsSeen
	err := filepath.WalkDir(dl, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || d.Name() != "scores" {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			f := strings.Fields(line)
			if len(f) != 2 {
				continue
			}
			us, _ := strconv.ParseFloat(f[1], 64)
			seen.n++
			seen.time += time.Duration(us * 1e3)
		}
		return nil
	})
	if err != nil || seen.n == 0 {
		log.Fatalf("reading the rows of %s under %s: %v (%d rows)", step, dl, err, seen.n)
	}
	return seen
}

// cli runs the binary's CLI as the run's admin (its HOME holds the
// client configuration the server wrote) from the work folder.
func (b *bench) cli(dir string, args ...string) string {
	cmd := exec.Command(b.bin, args...)
	cmd.Dir = b.work
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		log.Fatalf("shoal %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// waitIdle waits until the cluster's n nodes are idle.
func waitIdle(ctx context.Context, c *client.Client, n int) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		cp, err := c.GetCompute(ctx, "default", "batch")
		if err == nil && cp.NodeStateCounts.IdleNodeCount == n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	log.Fatalf("%d idle nodes not ready within 2 minutes", n)
}

// median is the median of f over rs.
func median(rs []result, f func(result) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	n := len(v)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
