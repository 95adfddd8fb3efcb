// Command jobs measures Shoal's job path end to end with real processes on
// this host: the latency from submitting a job to its process running on a
// warm idle node, and the throughput of trivial jobs through a cluster of
// 8 local nodes, over several runs in a row. Each run starts a fresh
// `shoal server` (the binary given, which the local provider also starts as
// `shoal agent`) on a fresh data dir. With --baseline a second binary runs
// the same runs, alternating with the first, so that a change is measured
// against what it replaces in one sitting, under the same load. Run it
// with bench/jobs.sh, which builds the binaries.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/shoal-ml/shoal/internal/testhosts"
	"github.com/shoal-ml/shoal/internal/testpg"
)

// arm is one binary under test.
type arm struct {
	label string
	bin   string
	runs  []result
}

// result is what one run measured.
type result struct {
	p50, p99, max float64 // submit→running on a warm node, ms
	jobsPerSec    float64
	agentMSPerJob float64 // the agents' own CPU per job (their jobs' processes apart), ms
	line          string
}

func main() {
	bin := flag.String("bin", "", "the shoal binary run as the server and its agents (required)")
	baseline := flag.String("baseline", "", "a second shoal binary (the code before a change), run alternately with --bin")
	runs := flag.Int("runs", 5, "runs in a row for each binary and store, each on a fresh server and data dir")
	latencyJobs := flag.Int("latency-jobs", 200, "jobs submitted one after another on a warm node")
	throughputJobs := flag.Int("throughput-jobs", 2000, "trivial jobs pushed through the nodes")
	nodes := flag.Int("nodes", 8, "nodes of the throughput cluster")
	keep := flag.Bool("keep", false, "keep the runs' data directories (agent logs, server logs) and print their folder")
	store := flag.String("store", "sqlite", "the store: sqlite, postgres (a private PostgreSQL server, as root with Debian's postgresql) or both, one after the other")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the --bin server's first throughput run to this file")
	agentProfile := flag.String("agent-cpuprofile", "", "write a CPU profile of one agent of the --bin server's first run (the busiest: a throughput node's, its whole life) to this file")
	flag.Parse()
	if *bin == "" {
		log.Fatal("--bin is required")
	}
	if *runs < 1 || *latencyJobs < 1 || *throughputJobs < 2 || *nodes < 1 {
		log.Fatal("--runs, --latency-jobs and --nodes must be at least 1, --throughput-jobs at least 2")
	}
	var stores []string
	switch *store {
	case "sqlite", "postgres":
		stores = []string{*store}
	case "both":
		stores = []string{"sqlite", "postgres"}
	default:
		log.Fatalf("--store %q: sqlite, postgres or both", *store)
	}
	// Every run gets a folder of its own under one root, and the root is
	// deleted only once every run is done. Deleting a run's thousands of
	// work dirs before the next run would measure the bench's own cleanup:
	// on ext4 without a journal (this VM's disk) a freed inode is skipped
	// by the allocator for 60 s, 360 s while its inode table block is
	// dirty, so the runs after a mass deletion allocate every file and
	// folder past tens of thousands of recently freed ones.
	root, err := os.MkdirTemp("", "shoal-bench-jobs-")
	if err != nil {
		log.Fatal(err)
	}
	if *keep {
		fmt.Println("data directories kept under", root)
	} else {
		defer os.RemoveAll(root)
	}
	// The thread's CPU, which Getrusage reads: this goroutine must stay
	// on it for the probe.
	runtime.LockOSThread()
	if c, err := mkdirCost(root, 200); err == nil {
		fmt.Printf("== folders under %s: a mkdir takes %.0f µs of CPU (ext4 with few recently freed inodes: about 20; see fsprobe.go)\n", root, float64(c.Nanoseconds())/1e3)
	}
	runtime.UnlockOSThread()
	// The nodes live beside each data dir; the root is opened (0711) so
	// that the accounts work runs as (the server running as root) reach
	// their folders.
	_ = os.Chmod(root, 0o711)
	arms := []*arm{{label: "current", bin: *bin}}
	if *baseline != "" {
		arms = []*arm{{label: "baseline", bin: *baseline}, {label: "current", bin: *bin}}
	}
	prog := &testhosts.Program{}
	defer prog.Done()
	ctx := context.Background()
	var pg *testpg.Server
	for _, st := range stores {
		fmt.Printf("== store: %s; %d runs of %d jobs on a warm node and %d trivial jobs through %d nodes\n", st, *runs, *latencyJobs, *throughputJobs, *nodes)
		for _, a := range arms {
			a.runs = nil
		}
		for i := 0; i < *runs; i++ {
			// Alternate which binary goes first, so that neither always
			// runs just after the other's clean-up of its nodes.
			order := slices.Clone(arms)
			if i%2 == 1 {
				slices.Reverse(order)
			}
			for _, a := range order {
				url, pgPID := "", 0
				if st == "postgres" {
					if pg == nil {
						pg = testpg.Start(prog) // a private server: needs Debian's postgresql
					}
					url, pgPID = pg.NewDatabase(prog), pg.PID()
				}
				profile, agentProf := "", ""
				if i == 0 && a.label == "current" {
					profile, agentProf = *cpuProfile, *agentProfile
				}
				dir := filepath.Join(root, fmt.Sprintf("%s-%s-%d", st, a.label, i+1))
				r := run(ctx, a.bin, dir, url, pgPID, profile, agentProf, *latencyJobs, *throughputJobs, *nodes)
				a.runs = append(a.runs, r)
				fmt.Printf("%-8s run %d: %s\n", a.label, i+1, r.line)
			}
		}
		for _, a := range arms {
			summarize(a)
		}
		if len(arms) == 2 {
			b, c := median(arms[0].runs, func(r result) float64 { return r.jobsPerSec }), median(arms[1].runs, func(r result) float64 { return r.jobsPerSec })
			fmt.Printf("current/baseline throughput (medians): %.2f×\n", c/b)
		}
	}
}

// summarize prints an arm's runs in order (a decay shows as a falling
// series) and their medians.
func summarize(a *arm) {
	var series []string
	for _, r := range a.runs {
		series = append(series, fmt.Sprintf("%.0f", r.jobsPerSec))
	}
	fmt.Printf("%-8s throughput, runs in order: %s jobs/s; median %.0f jobs/s; the agents' own CPU per job (their jobs' processes apart) median %.2f ms; submit→running median p50 %.1f ms, p99 %.1f ms\n",
		a.label, strings.Join(series, ", "),
		median(a.runs, func(r result) float64 { return r.jobsPerSec }),
		median(a.runs, func(r result) float64 { return r.agentMSPerJob }),
		median(a.runs, func(r result) float64 { return r.p50 }),
		median(a.runs, func(r result) float64 { return r.p99 }))
}

// median returns the median of f over rs (the mean of the middle two for
// an even count).
func median(rs []result, f func(result) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
