// Package benchsrv runs a real `shoal server` process for the bench
// programs that measure the job path (bench/jobs, bench/data): one way to
// start it on a fresh data dir, make a warm cluster, submit a job and
// wait for it, so that every program measures the same thing.
package benchsrv

import (
	"context"
	"encoding/json"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/shoal-ml/shoal/bench/internal/ports"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/job"
)

// Server is a `shoal server` process of one run.
type Server struct {
	Cmd *exec.Cmd
	// Dir is the run's folder (data dir, nodes dir, config, log).
	Dir string
	// URL is where the server answers.
	URL string
	// PprofAddr is the server's pprof listener, "" when not asked for.
	PprofAddr string
	// Token is the server's admin's token (what the returned client
	// calls with), for programs that call routes the client lacks.
	Token string
}

// Start starts bin as a server on a fresh data dir under dir (the store
// at url, "" for SQLite in the data dir; config, when not empty, is the
// server's YAML configuration) and waits until it answers.
func Start(bin, dir, url, config string, pprof bool) (*Server, *client.Client) {
	if err := os.MkdirAll(dir, 0o711); err != nil {
		log.Fatal(err)
	}
	// 0711: the nodes' job accounts pass through the run's folder to
	// their own work dirs, and list nothing of it.
	_ = os.Chmod(dir, 0o711)
	if err := os.WriteFile(filepath.Join(dir, "server.yml"), []byte("kill_grace: 1s\n"+config), 0o600); err != nil {
		log.Fatal(err)
	}
	addr := ports.Restartable()
	s := &Server{Dir: dir, URL: "http://" + addr}
	args := []string{"server", "--listen", addr, "--data-dir", filepath.Join(dir, "data"), "--nodes-dir", filepath.Join(dir, "nodes"),
		"--config", filepath.Join(dir, "server.yml"), "--log-level", "warn"}
	if pprof {
		s.PprofAddr = ports.Restartable()
		args = append(args, "--pprof-listen", s.PprofAddr)
	}
	s.Cmd = exec.Command(bin, args...)
	// HOME is the run's folder: the CLI configuration the server writes
	// for its admin goes there, not to the invoking user's home.
	s.Cmd.Env = append(os.Environ(), "HOME="+dir, "SHOAL_STORE="+url)
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		log.Fatal(err)
	}
	defer logf.Close()
	s.Cmd.Stdout, s.Cmd.Stderr = logf, logf
	if err := s.Cmd.Start(); err != nil {
		log.Fatal(err)
	}
	began := time.Now()
	for {
		if t, err := os.ReadFile(filepath.Join(dir, "data", "admin.token")); err == nil && len(t) > 0 {
			s.Token = strings.TrimSpace(string(t))
			c := client.NewClient(s.URL, s.Token)
			if _, err := c.ListComputes(context.Background(), "default", ""); err == nil {
				return s, c
			}
		}
		if time.Since(began) > 2*time.Minute {
			// The log is printed: a program's temp dirs go when it ends.
			out, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			log.Fatalf("the server did not start within 2 minutes; its log:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop ends the server (SIGTERM: a graceful shutdown).
func (s *Server) Stop() {
	_ = s.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = s.Cmd.Process.Kill()
		<-done
	}
}

// MustCompute makes a cluster of n always-on nodes and waits until all
// are idle.
func MustCompute(ctx context.Context, c *client.Client, name string, n int) {
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

// Submit submits a job document (the YAML's fields) to the default
// workspace.
func Submit(ctx context.Context, c *client.Client, doc map[string]any) *job.Job {
	b, _ := json.Marshal(doc)
	j, _, err := c.SubmitJob(ctx, "default", b, "")
	if err != nil {
		log.Fatal(err)
	}
	return j
}

// WaitDone polls a job until it ends and stops the program unless it
// completed.
func WaitDone(ctx context.Context, c *client.Client, name string) *job.Job {
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

// StartLatency is the time from submitting a job (whose submit call began
// at submitted) to the server recording its first rank's process as
// started: the agent reports it right after the process is spawned, so
// it counts placement, the node's preparation (inputs included) and the
// spawn.
func StartLatency(ctx context.Context, c *client.Client, name string, submitted time.Time) time.Duration {
	atts, err := c.ListAttempts(ctx, "default", name)
	if err != nil || len(atts) != 1 || atts[0].Ranks[0].StartTime == nil {
		log.Fatalf("attempts of %s: %v %v", name, atts, err)
	}
	return atts[0].Ranks[0].StartTime.Sub(submitted)
}
