package e2e_test

import (
	"bytes"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// `compute events --follow` prints events as they happen; `job list
// --watch` prints jobs as their status changes.
func TestFollowAndWatch(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	mustRun(t, s.env, "compute", "create", "--name", "follow-cpu", "--size", "Standard_DS3_v2", "--max-instances", "1", "-o", "none")
	start := func(args ...string) (*syncBuffer, *exec.Cmd) {
		out := &syncBuffer{}
		cmd := exec.Command(shoalBin, args...)
		cmd.Env, cmd.Stdout, cmd.Stderr = s.env, out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return out, cmd
	}
	events, _ := start("compute", "events", "-n", "follow-cpu", "--follow", "-o", "tsv")
	jobs, _ := start("job", "list", "--watch", "-o", "tsv")
	waitFor(t, 10*time.Second, "the events so far", func() (bool, string) {
		return strings.Contains(events.String(), "created"), events.String()
	})
	mustRun(t, s.env, "compute", "update", "-n", "follow-cpu", "--max-instances", "2", "-o", "none")
	waitFor(t, 10*time.Second, "the update followed", func() (bool, string) {
		return strings.Contains(events.String(), "max_instances 1→2"), events.String()
	})
	name := strings.TrimSpace(mustRun(t, s.env, "job", "create", "-f", writeJobFile(t, "command: sleep 4\ncompute: follow-cpu\n"), "--query", "name", "-o", "tsv"))
	waitFor(t, 60*time.Second, "the job watched to Completed", func() (bool, string) {
		out := jobs.String()
		// Printed again as it changed: some status before Completed.
		return strings.Count(out, name+"\t") >= 2 && strings.Contains(out, "Completed"), out
	})
}
