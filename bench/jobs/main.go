// Command jobs measures Shoal's job path end to end with real agent
// processes on this host: the latency from submitting a job to its process
// running on a warm idle node, and the throughput of trivial jobs through a
// cluster of 8 local nodes. Run it with bench/jobs.sh, which builds the
// shoal binary the local provider starts as `shoal agent`.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/app"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/internal/testhosts"
	"github.com/shoal-ml/shoal/internal/testpg"
)

func main() {
	agentBin := flag.String("agent", "", "path of the shoal binary started as `shoal agent` (required)")
	latencyJobs := flag.Int("latency-jobs", 200, "jobs submitted one after another on a warm node")
	throughputJobs := flag.Int("throughput-jobs", 2000, "trivial jobs pushed through 8 nodes")
	nodes := flag.Int("nodes", 8, "nodes of the throughput cluster")
	keep := flag.Bool("keep", false, "keep the server's data directory (agent logs) and print its path")
	store := flag.String("store", "sqlite", "the store: sqlite, postgres (a private PostgreSQL server, as root with Debian's postgresql) or both, side by side")
	cpuProfile := flag.String("cpuprofile", "", "write the server's CPU profile (it runs in this process) to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if *agentBin == "" {
		log.Fatal("--agent is required")
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
	prog := &testhosts.Program{}
	defer prog.Done()
	ctx := context.Background()
	var pg *testpg.Server
	for _, st := range stores {
		url := ""
		if st == "postgres" {
			if pg == nil {
				pg = testpg.Start(prog) // a private server: needs Debian's postgresql
			}
			url = pg.NewDatabase(prog)
		}
		fmt.Printf("== store: %s\n", st)
		run(ctx, *agentBin, url, *keep, *latencyJobs, *throughputJobs, *nodes)
	}
}

// run starts a server on the store (url; "" for SQLite in its data dir)
// and measures latency and throughput on it.
func run(ctx context.Context, agentBin, url string, keep bool, latencyJobs, throughputJobs, nodes int) {
	dir, err := os.MkdirTemp("", "shoal-bench-")
	if err != nil {
		log.Fatal(err)
	}
	if keep {
		fmt.Println("data directory kept:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	cfgPath := filepath.Join(dir, "server.yml")
	os.WriteFile(cfgPath, []byte("kill_grace: 1s\n"), 0o600)
	m, err := app.Start(ctx, app.Options{Listen: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"), NodesDir: benchNodesDir(dir), ConfigPath: cfgPath,
		ClientConfigPath: "-", AgentExecutable: agentBin, Store: url})
	if err != nil {
		log.Fatal(err)
	}
	c := client.NewClient(m.URL(), m.AdminToken)
	defer func() {
		for _, name := range []string{"bench-warm", "bench-tput"} {
			c.DeleteCompute(ctx, "default", name, "")
		}
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			l, _ := c.ListComputes(ctx, "default", "")
			if len(l) == 0 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		m.Close()
	}()
	latency(ctx, c, latencyJobs)
	throughput(ctx, c, throughputJobs, nodes)
}

func mustCompute(ctx context.Context, c *client.Client, name string, n int) {
	doc, _ := json.Marshal(map[string]any{"name": name, "min_instances": n, "max_instances": n, "idle_time_before_scale_down": 600})
	if _, _, err := c.ApplyCompute(ctx, "default", name, doc, ""); err != nil {
		log.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		cp, err := c.GetCompute(ctx, "default", name)
		if err == nil && cp.NodeStateCounts.IdleNodeCount == n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	log.Fatalf("%s: %d idle nodes not ready within 60 s", name, n)
}

func submit(ctx context.Context, c *client.Client, compute, command string) *shoal.Job {
	doc, _ := json.Marshal(map[string]any{"command": command, "compute": compute})
	j, _, err := c.SubmitJob(ctx, "default", doc, "")
	if err != nil {
		log.Fatal(err)
	}
	return j
}

func waitDone(ctx context.Context, c *client.Client, name string) *shoal.Job {
	for {
		j, err := c.GetJob(ctx, "default", name)
		if err != nil {
			log.Fatal(err)
		}
		if shoal.JobTerminal(j.Status) {
			if j.Status != shoal.JobCompleted {
				log.Fatalf("job %s ended %s: %s", name, j.Status, j.Error)
			}
			return j
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// latency submits jobs one at a time to a warm idle node and measures the
// time from the submit call to the server recording the job's process as
// started (the agent reports it right after the process is spawned).
func latency(ctx context.Context, c *client.Client, n int) {
	mustCompute(ctx, c, "bench-warm", 1)
	var samples []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		j := submit(ctx, c, "bench-warm", "true")
		waitDone(ctx, c, j.Name)
		atts, err := c.ListAttempts(ctx, "default", j.Name)
		if err != nil || len(atts) != 1 || atts[0].Ranks[0].StartTime == nil {
			log.Fatalf("attempts of %s: %v %v", j.Name, atts, err)
		}
		samples = append(samples, atts[0].Ranks[0].StartTime.Sub(start))
	}
	slices.Sort(samples)
	p := func(q float64) time.Duration { return samples[int(q*float64(len(samples)-1))] }
	fmt.Printf("submit→running on a warm idle node: %d jobs: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
		n, ms(p(0.5)), ms(p(0.99)), ms(samples[len(samples)-1]))
}

// throughput pushes n trivial jobs through a cluster of nodes nodes.
func throughput(ctx context.Context, c *client.Client, n, nodes int) {
	mustCompute(ctx, c, "bench-tput", nodes)
	names := make([]string, n)
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				names[i] = submit(ctx, c, "bench-tput", "true").Name
			}
		}()
	}
	wg.Wait()
	submitted := time.Since(start)
	for {
		jobs, err := c.ListJobs(ctx, "default", []string{shoal.JobCompleted}, "bench-tput", 0)
		if err != nil {
			log.Fatal(err)
		}
		if len(jobs) >= n {
			break
		}
		failed, _ := c.ListJobs(ctx, "default", []string{shoal.JobFailed, shoal.JobCanceled}, "bench-tput", 0)
		if len(failed) > 0 {
			log.Fatalf("%d jobs failed, e.g. %s: %s", len(failed), failed[0].Name, failed[0].Error)
		}
		time.Sleep(250 * time.Millisecond)
	}
	took := time.Since(start)
	fmt.Printf("throughput: %d trivial jobs through %d local nodes in %.2f s: %.0f jobs/s (all submitted after %.2f s)\n",
		n, nodes, took.Seconds(), float64(n)/took.Seconds(), submitted.Seconds())
	phases(ctx, c, names[len(names)/2:len(names)/2+min(200, len(names)/2)])
}

// phases prints where a node's time goes between two jobs, from the
// times the server recorded: placement → process running → process ended
// → job completed → next placement on the same node.
func phases(ctx context.Context, c *client.Client, names []string) {
	type span struct{ placed, running, ended, done time.Time }
	byNode := map[string][]span{}
	for _, name := range names {
		atts, err := c.ListAttempts(ctx, "default", name)
		if err != nil || len(atts) == 0 {
			continue
		}
		a := atts[len(atts)-1]
		r := a.Ranks[0]
		if r.StartTime == nil || r.EndTime == nil || a.EndTime == nil {
			continue
		}
		byNode[r.NodeID] = append(byNode[r.NodeID], span{a.CreatedOn, *r.StartTime, *r.EndTime, *a.EndTime})
	}
	var toRun, running, toDone, toNext []time.Duration
	for _, spans := range byNode {
		slices.SortFunc(spans, func(a, b span) int { return a.placed.Compare(b.placed) })
		for i, sp := range spans {
			toRun = append(toRun, sp.running.Sub(sp.placed))
			running = append(running, sp.ended.Sub(sp.running))
			toDone = append(toDone, sp.done.Sub(sp.ended))
			if i+1 < len(spans) {
				toNext = append(toNext, spans[i+1].placed.Sub(sp.done))
			}
		}
	}
	med := func(d []time.Duration) float64 {
		if len(d) == 0 {
			return 0
		}
		slices.Sort(d)
		return ms(d[len(d)/2])
	}
	fmt.Printf("per job on a node (medians): placed→running %.1f ms, running→ended %.1f ms, ended→completed %.1f ms, completed→next placed %.1f ms\n",
		med(toRun), med(running), med(toDone), med(toNext))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// benchNodesDir is where the bench's nodes keep their work dirs: beside
// the data dir, in the bench's folder, which is opened (0711) so that the
// accounts work runs as (the server running as root) reach their folders.
func benchNodesDir(dir string) string {
	_ = os.Chmod(dir, 0o711)
	return filepath.Join(dir, "nodes")
}
