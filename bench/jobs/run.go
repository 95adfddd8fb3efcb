package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/shoal-ml/shoal/bench/internal/ports"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/job"
)

// server is a `shoal server` process of one run.
type server struct {
	cmd       *exec.Cmd
	dir       string
	url       string
	pprofAddr string
}

// startServer starts bin as a server on a fresh data dir under dir (the
// store at url, "" for SQLite in the data dir) and waits until it answers.
func startServer(bin, dir, url string, pprof bool) (*server, *client.Client) {
	if err := os.MkdirAll(dir, 0o711); err != nil {
		log.Fatal(err)
	}
	_ = os.Chmod(dir, 0o711)
	if err := os.WriteFile(filepath.Join(dir, "server.yml"), []byte("kill_grace: 1s\n"), 0o600); err != nil {
		log.Fatal(err)
	}
	addr := ports.Restartable()
	s := &server{dir: dir, url: "http://" + addr}
	args := []string{"server", "--listen", addr, "--data-dir", filepath.Join(dir, "data"), "--nodes-dir", filepath.Join(dir, "nodes"),
		"--config", filepath.Join(dir, "server.yml"), "--log-level", "warn"}
	if pprof {
		s.pprofAddr = ports.Restartable()
		args = append(args, "--pprof-listen", s.pprofAddr)
	}
	s.cmd = exec.Command(bin, args...)
	// HOME is the run's folder: the CLI configuration the server writes
	// for its admin goes there, not to the invoking user's home.
	s.cmd.Env = append(os.Environ(), "HOME="+dir, "SHOAL_STORE="+url)
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		log.Fatal(err)
	}
	defer logf.Close()
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		log.Fatal(err)
	}
	began := time.Now()
	for {
		if t, err := os.ReadFile(filepath.Join(dir, "data", "admin.token")); err == nil && len(t) > 0 {
			c := client.NewClient(s.url, strings.TrimSpace(string(t)))
			if _, err := c.ListComputes(context.Background(), "default", ""); err == nil {
				return s, c
			}
		}
		if time.Since(began) > 2*time.Minute {
			log.Fatalf("the server did not start within 2 minutes; see %s", filepath.Join(dir, "server.log"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the server (SIGTERM: a graceful shutdown).
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// cpuProfile writes a CPU profile of the server's next d to path.
func (s *server) cpuProfile(path string, d time.Duration) {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", s.pprofAddr, max(1, int(d.Seconds()))))
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
func run(ctx context.Context, bin, dir, url, profile string, latencyJobs, throughputJobs, nodes int) result {
	s, c := startServer(bin, dir, url, profile != "")
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
		s.stop()
	}()
	var r result
	r.p50, r.p99, r.max = latency(ctx, c, latencyJobs)
	var tput string
	r.jobsPerSec, tput = throughput(ctx, c, s, profile, throughputJobs, nodes)
	r.line = fmt.Sprintf("submit→running p50 %.1f ms, p99 %.1f ms, max %.1f ms; %s", r.p50, r.p99, r.max, tput)
	return r
}

func mustCompute(ctx context.Context, c *client.Client, name string, n int) {
	doc, _ := json.Marshal(map[string]any{"name": name, "min_instances": n, "max_instances": n, "idle_time_before_scale_down": 600})
	if _, _, err := c.ApplyCompute(ctx, "default", name, doc, ""); err != nil {
		log.Fatal(err)
	}
	// Two minutes: on 2 cores shared with other benches, 8 agents can take
	// over one to join.
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		cp, err := c.GetCompute(ctx, "default", name)
		if err == nil && cp.NodeStateCounts.IdleNodeCount == n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	log.Fatalf("%s: %d idle nodes not ready within 2 minutes", name, n)
}

func submit(ctx context.Context, c *client.Client, compute, command string) *job.Job {
	doc, _ := json.Marshal(map[string]any{"command": command, "compute": compute})
	j, _, err := c.SubmitJob(ctx, "default", doc, "")
	if err != nil {
		log.Fatal(err)
	}
	return j
}

func waitDone(ctx context.Context, c *client.Client, name string) *job.Job {
	for {
		j, err := c.GetJob(ctx, "default", name)
		if err != nil {
			log.Fatal(err)
		}
		if job.JobTerminal(j.Status) {
			if j.Status != job.JobCompleted {
				log.Fatalf("job %s ended %s: %s", name, j.Status, j.Error)
			}
			return j
		}
		time.Sleep(2 * time.Millisecond)
	}
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
		atts, err := c.ListAttempts(ctx, "default", j.Name)
		if err != nil || len(atts) != 1 || atts[0].Ranks[0].StartTime == nil {
			log.Fatalf("attempts of %s: %v %v", j.Name, atts, err)
		}
		samples = append(samples, atts[0].Ranks[0].StartTime.Sub(start))
	}
	slices.Sort(samples)
	p := func(q float64) time.Duration { return samples[int(q*float64(len(samples)-1))] }
	return ms(p(0.5)), ms(p(0.99)), ms(samples[len(samples)-1])
}

// throughput pushes n trivial jobs through a cluster of nodes nodes and
// returns jobs/s and a line saying what was measured.
func throughput(ctx context.Context, c *client.Client, s *server, profile string, n, nodes int) (float64, string) {
	mustCompute(ctx, c, "bench-tput", nodes)
	if profile != "" {
		// A 5 s profile from the start of the push: the run's busiest part.
		go s.cpuProfile(profile, 5*time.Second)
	}
	names := make([]string, n)
	cpu0 := sampleCPU(s.cmd.Process.Pid)
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
	cpu := cpuSince(cpu0, sampleCPU(s.cmd.Process.Pid))
	rate := float64(n) / took.Seconds()
	return rate, fmt.Sprintf("%d jobs through %d nodes in %.2f s: %.0f jobs/s (all submitted after %.2f s); %s; %s",
		n, nodes, took.Seconds(), rate, submitted.Seconds(), cpu, phases(ctx, c, names[len(names)/2:len(names)/2+min(200, len(names)/2)]))
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
