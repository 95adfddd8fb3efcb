package e2e_test

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer a process writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestComputeDeleteWaitsThenForce: deleting a cluster whose job runs says
// which job it waits for and on which node (stderr, a line per change: no
// terminal here) and fails the queued job; interrupted and run again with
// --force, the delete cancels the running job, says so, and ends.
func TestComputeDeleteWaitsThenForce(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster = "delete-cluster"
	createCluster(t, s, cluster, "--max-instances", "1", "--idle-time-before-scale-down", "60")
	file := writeJobFile(t, "type: command\ncommand: sleep 300\ncompute: azureml:"+cluster+"\n")
	running := submitJob(t, s, file)
	waitJob(t, s, running, 30*time.Second, "Running")
	queued := submitJob(t, s, file)
	node := listNodes(t, s, cluster)[0].ID

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, shoalBin, "compute", "delete", "-n", cluster, "--yes")
	cmd.Env = s.env
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	want := "Deleting compute " + cluster + ": waiting for 1 running job: " + running + " (Running on node " + node + ")"
	waitFor(t, 20*time.Second, "the delete to say what it waits for", func() (bool, string) {
		return strings.Contains(stderr.String(), want), stderr.String()
	})
	if j := waitJob(t, s, queued, 10*time.Second, "Failed"); !strings.Contains(j.Error, "deleted") {
		t.Errorf("the queued job on the deleting compute: %s", j)
	}
	cancel()
	_ = cmd.Wait()
	if stdout.String() != "" {
		t.Errorf("the delete printed %q on stdout; progress belongs on stderr", stdout.String())
	}

	start := time.Now()
	_, errOut, code := run(t, s.env, "compute", "delete", "-n", cluster, "--yes", "--force")
	if code != 0 {
		t.Fatalf("delete --force: exit %d\n%s", code, errOut)
	}
	for _, w := range []string{"--force: canceled 1 job on compute " + cluster + ": " + running + " (Running)", "Deleting compute " + cluster + ": deleted ("} {
		if !strings.Contains(errOut, w) {
			t.Errorf("delete --force stderr lacks %q:\n%s", w, errOut)
		}
	}
	waitJob(t, s, running, 10*time.Second, "Canceled")
	if _, code := mustFail(t, s.env, "compute", "show", "-n", cluster); code == 0 {
		t.Error("the compute is still there")
	}
	t.Logf("delete --force took %s:\n%s", time.Since(start).Round(time.Millisecond), errOut)
}
