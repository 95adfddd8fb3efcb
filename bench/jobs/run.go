package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoal-ml/shoal/bench/internal/benchsrv"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/job"
)

// server is a `shoal server` process of one run.
type server struct{ *benchsrv.Server }

// startServer starts bin as a server on a fresh data dir under dir.
func startServer(bin, dir, url string, pprof bool) (*server, *client.Client) {
	s, c := benchsrv.Start(bin, dir, url, "", pprof)
	return &server{s}, c
}

// cpuProfile writes a CPU profile of the server's next d to path.
func (s *server) cpuProfile(path string, d time.Duration) {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", s.PprofAddr, max(1, int(d.Seconds()))))
	if err != nil {
		log.Printf("cpu profile: %v", err)
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		log.Printf("cpu profile: %v", err)
		return
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		log.Printf("cpu profile: %v", err)
	}
}

// run is one run: a fresh server, latency on a warm node, throughput
// through nodes nodes; the nodes are deleted and the server stopped after.
func run(ctx context.Context, bin, dir, url string, pgPID int, profile, agentProfile string, latencyJobs, throughputJobs, nodes int) result {
	agentProfiles := ""
	if agentProfile != "" {
		// The server passes its environment to the agents the local
		// provider starts: each writes its profile there when it ends.
		agentProfiles = filepath.Join(dir, "agent-profiles")
		if err := os.MkdirAll(agentProfiles, 0o755); err != nil {
			log.Fatal(err)
		}
		os.Setenv(agentProfileEnv, agentProfiles)
	}
	s, c := startServer(bin, dir, url, profile != "")
	os.Unsetenv(agentProfileEnv)
	defer func() {
		if agentProfiles != "" {
			keepBusiestProfile(agentProfiles, agentProfile)
		}
	}()
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
		s.Stop()
	}()
	var r result
	r.p50, r.p99, r.max = latency(ctx, c, latencyJobs)
	var tput string
	r.jobsPerSec, r.agentMSPerJob, tput = throughput(ctx, c, s, pgPID, profile, throughputJobs, nodes)
	r.line = fmt.Sprintf("submit→running p50 %.1f ms, p99 %.1f ms, max %.1f ms; %s", r.p50, r.p99, r.max, tput)
	return r
}

func mustCompute(ctx context.Context, c *client.Client, name string, n int) {
	benchsrv.MustCompute(ctx, c, name, n)
}

func submit(ctx context.Context, c *client.Client, compute, command string) *job.Job {
	return benchsrv.Submit(ctx, c, map[string]any{"command": command, "compute": compute})
}

func waitDone(ctx context.Context, c *client.Client, name string) *job.Job {
	return benchsrv.WaitDone(ctx, c, name)
}

// latency submits jobs one at a time to a warm idle node and measures the
// time from the submit call to the server recording the job's process as
// started (the agent reports it right after the process is spawned); it
// returns p50, p99 and the maximum in ms.
func latency(ctx context.Context, c *client.Client, n int) (p50, p99, maxMS float64) {
	mustCompute(ctx, c, "bench-warm", 1)
	var samples []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		j := submit(ctx, c, "bench-warm", "true")
		waitDone(ctx, c, j.Name)
		samples = append(samples, benchsrv.StartLatency(ctx, c, j.Name, start))
	}
	slices.Sort(samples)
	p := func(q float64) time.Duration { return samples[int(q*float64(len(samples)-1))] }
	return ms(p(0.5)), ms(p(0.99)), ms(samples[len(samples)-1])
}

// throughput pushes n trivial jobs through a cluster of nodes nodes and
// returns jobs/s and a line saying what was measured.
func throughput(ctx context.Context, c *client.Client, s *server, pgPID int, profile string, n, nodes int) (rate, agentMS float64, line string) {
	mustCompute(ctx, c, "bench-tput", nodes)
	if profile != "" {
		// A 5 s profile from the start of the push: the run's busiest part.
		go s.cpuProfile(profile, 5*time.Second)
	}
	names := make([]string, n)
	cpu0 := sampleCPU(s.Cmd.Process.Pid, pgPID)
	wp0 := sampleWritePath(ctx, s)
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
	// The last job submitted is among the last to end: until it has, one
	// job is asked for (listing 2,000 jobs every 100 ms took 6 % of the
	// server's CPU, which the measure then lacked), then the list says
	// whether all have.
	for {
		j, err := c.GetJob(ctx, "default", names[n-1])
		if err != nil {
			log.Fatal(err)
		}
		if job.JobTerminal(j.Status) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for {
		jobs, err := c.ListJobs(ctx, "default", []string{job.JobCompleted}, "bench-tput", 0)
		if err != nil {
			log.Fatal(err)
		}
		if len(jobs) >= n {
			break
		}
		failed, _ := c.ListJobs(ctx, "default", []string{job.JobFailed, job.JobCanceled}, "bench-tput", 0)
		if len(failed) > 0 {
			log.Fatalf("%d jobs failed, e.g. %s: %s", len(failed), failed[0].Name, failed[0].Error)
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(start)
	cpu, agentMS := cpuSince(cpu0, sampleCPU(s.Cmd.Process.Pid, pgPID), n)
	wp := writePathSince(wp0, sampleWritePath(ctx, s), n)
	rate = float64(n) / took.Seconds()
	return rate, agentMS, fmt.Sprintf("%d jobs through %d nodes in %.2f s: %.0f jobs/s (all submitted after %.2f s); %s; %s; %s",
		n, nodes, took.Seconds(), rate, submitted.Seconds(), cpu, wp, phases(ctx, c, names[len(names)/2:len(names)/2+min(200, len(names)/2)]))
}

// phases says where a node's time goes between two jobs, from the times
// the server recorded: placement → process running → process ended → job
// completed → next placement on the same node.
func phases(ctx context.Context, c *client.Client, names []string) string {
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
	return fmt.Sprintf("per job on a node (medians): placed→running %.1f ms, running→ended %.1f ms, ended→completed %.1f ms, completed→next placed %.1f ms",
		med(toRun), med(running), med(toDone), med(toNext))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
