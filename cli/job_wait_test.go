package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
)

// While a streamed job waits to start, stderr says where it is and why
// (Queued with the scheduler's reason, Preparing with its image pull),
// one line per change; its output then goes to stdout alone.
func TestJobStreamShowsWhyItWaits(t *testing.T) {
	clock := newFakeClock()
	f := newFakeAPI(t, clock)
	jobPath := "/api/v1/workspaces/default/jobs/j"
	state := func() *job.Job {
		j := &job.Job{JobSpec: job.JobSpec{Name: "j", Type: job.JobTypeCommand}}
		switch n := f.count("GET " + jobPath); {
		case n <= 4:
			j.Status, j.StatusReason = job.JobQueued, "waiting for nodes to be provisioned (0 of 1 ready)"
		case n <= 8:
			j.Status, j.StatusReason = job.JobPreparing, "pulling image python:3.12"
		default:
			j.Status = job.JobRunning
		}
		return j
	}
	f.handle("GET "+jobPath, func(*http.Request) (int, any) { return http.StatusOK, state() })
	f.mux.HandleFunc("GET "+jobPath+"/logs", func(w http.ResponseWriter, r *http.Request) {
		// The log follow holds the request until the job runs, as the
		// server's does.
		for f.count("GET "+jobPath) <= 8 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Millisecond):
			}
		}
		_, _ = io.WriteString(w, "hello\n")
	})
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	stdout, stderr, err := runCLI(t, srv, clock, "job", "stream", "-n", "j")
	if err != nil {
		t.Fatalf("stream: %v\nstderr:\n%s", err, stderr)
	}
	if stdout != "hello\n" {
		t.Errorf("stdout %q, want the job's output alone", stdout)
	}
	queued := strings.Index(stderr, "Job j: Queued: waiting for nodes to be provisioned (0 of 1 ready) (0s)\n")
	preparing := strings.Index(stderr, "Job j: Preparing: pulling image python:3.12 (")
	if queued < 0 || preparing < queued {
		t.Errorf("stderr does not say why the job waits, in order:\n%s", stderr)
	}
	if strings.Count(stderr, "\n") != 2 {
		t.Errorf("stderr has more than one line per change:\n%s", stderr)
	}
}

// Starting an instance shows its state until it runs, then prints the
// instance on stdout alone.
func TestInstanceStartShowsState(t *testing.T) {
	clock := newFakeClock()
	f := newFakeAPI(t, clock)
	path := "/api/v1/workspaces/default/computes/ci"
	instance := func(state, op string) compute.Compute {
		c := compute.Compute{ComputeSpec: compute.ComputeSpec{Name: "ci", Type: compute.ComputeTypeInstance}, ProvisioningState: compute.ProvisioningSucceeded}
		c.State = state
		c.LastOperation = &compute.LastOperation{OperationName: "Start", OperationStatus: op}
		return c
	}
	f.handle("POST "+path+"/start", func(*http.Request) (int, any) {
		return http.StatusAccepted, instance(compute.InstanceStarting, compute.OperationInProgress)
	})
	f.handle("GET "+path, func(*http.Request) (int, any) {
		if f.count("GET "+path) < 4 {
			return http.StatusOK, instance(compute.InstanceStarting, compute.OperationInProgress)
		}
		return http.StatusOK, instance(compute.InstanceRunning, compute.OperationSucceeded)
	})
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	stdout, stderr, err := runCLI(t, srv, clock, "compute", "start", "-n", "ci")
	if err != nil {
		t.Fatalf("start: %v\nstderr:\n%s", err, stderr)
	}
	if want := "Starting compute instance ci: state Starting (Start InProgress) (0s)\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	if !strings.Contains(stdout, `"state": "Running"`) {
		t.Errorf("stdout %q, want the running instance", stdout)
	}
}
