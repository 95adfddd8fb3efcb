package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// fakeClock is a WaitClock whose Sleep moves time on at once.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return nil
}

// fakeAPI is a Shoal API server whose answers depend on the fake clock;
// it counts the requests it gets.
type fakeAPI struct {
	t     *testing.T
	clock *fakeClock
	mux   *http.ServeMux
	mu    sync.Mutex
	calls map[string]int
	total int
}

func newFakeAPI(t *testing.T, clock *fakeClock) *fakeAPI {
	return &fakeAPI{t: t, clock: clock, mux: http.NewServeMux(), calls: map[string]int{}}
}

// handle answers pattern (a ServeMux pattern) with what answer returns:
// a status and a body to encode as JSON.
func (f *fakeAPI) handle(pattern string, answer func(r *http.Request) (int, any)) {
	f.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		code, body := answer(r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(body)
	})
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls[r.Method+" "+r.URL.Path]++
	f.total++
	f.mu.Unlock()
	f.mux.ServeHTTP(w, r)
}

func (f *fakeAPI) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if key == "" {
		return f.total
	}
	return f.calls[key]
}

// runCLI runs the CLI against srv with the fake clock; it returns stdout,
// stderr and the error.
func runCLI(t *testing.T, srv *httptest.Server, clock cmdutil.WaitClock, args ...string) (string, string, error) {
	t.Helper()
	t.Setenv("SHOAL_SERVER", srv.URL)
	t.Setenv("SHOAL_TOKEN", "")
	t.Setenv("SHOAL_WORKSPACE", "")
	var stdout, stderr bytes.Buffer
	g := &cmdutil.Globals{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Clock: clock}
	root := newRootCommand(g)
	root.SetArgs(append(args, "--client-config", filepath.Join(t.TempDir(), "none.yaml")))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	err := root.ExecuteContext(context.Background())
	return stdout.String(), stderr.String(), err
}

const computePath = "/api/v1/workspaces/default/computes/c"

// deletingCluster serves a cluster c being deleted: a job "train" runs
// on its node c-0 until runFor has passed on the clock (unless canceled),
// and the compute is gone 10 s later (its node released).
func deletingCluster(t *testing.T, runFor time.Duration, queued ...string) (*fakeAPI, *httptest.Server) {
	clock := newFakeClock()
	f := newFakeAPI(t, clock)
	start := clock.Now()
	var mu sync.Mutex
	var canceledAt time.Time
	ends := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		if !canceledAt.IsZero() {
			return canceledAt.Add(time.Second)
		}
		return start.Add(runFor)
	}
	running := func() bool { return clock.Now().Before(ends()) }
	f.handle("DELETE "+computePath, func(*http.Request) (int, any) {
		return http.StatusAccepted, compute.Compute{ComputeSpec: compute.ComputeSpec{Name: "c", Type: compute.ComputeTypeCluster}, ProvisioningState: compute.ProvisioningDeleting}
	})
	f.handle("GET "+computePath, func(*http.Request) (int, any) {
		if !clock.Now().Before(ends().Add(10 * time.Second)) {
			return http.StatusNotFound, map[string]any{"error": map[string]string{"code": "NotFound", "message": "compute c not found"}}
		}
		return http.StatusOK, compute.Compute{ComputeSpec: compute.ComputeSpec{Name: "c", Type: compute.ComputeTypeCluster}, ProvisioningState: compute.ProvisioningDeleting}
	})
	f.handle("GET /api/v1/workspaces/default/jobs", func(r *http.Request) (int, any) {
		if r.URL.Query().Get("compute") != "c" {
			t.Errorf("jobs listed with compute=%q, want c", r.URL.Query().Get("compute"))
		}
		var jobs []*job.Job
		if running() {
			jobs = append(jobs, &job.Job{JobSpec: job.JobSpec{Name: "train"}, Status: job.JobRunning})
			mu.Lock()
			for _, q := range queued {
				if canceledAt.IsZero() {
					jobs = append(jobs, &job.Job{JobSpec: job.JobSpec{Name: q}, Status: job.JobQueued})
				}
			}
			mu.Unlock()
		}
		return http.StatusOK, map[string]any{"value": jobs}
	})
	f.handle("GET "+computePath+"/nodes", func(*http.Request) (int, any) {
		n := &node.Node{ID: "c-0", State: node.NodeIdle}
		if running() {
			n.CurrentJobName = "train"
		}
		return http.StatusOK, map[string]any{"value": []*node.Node{n}}
	})
	f.handle("POST /api/v1/workspaces/default/jobs/{name}/cancel", func(r *http.Request) (int, any) {
		mu.Lock()
		if canceledAt.IsZero() {
			canceledAt = clock.Now()
		}
		mu.Unlock()
		return http.StatusOK, job.Job{JobSpec: job.JobSpec{Name: r.PathValue("name")}, Status: job.JobCancelRequested}
	})
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

// A delete that waits two minutes for a running job says what it waits
// for, one line per change (stderr is no terminal here), asks the server
// a few dozen times rather than 586, and prints nothing on stdout.
func TestComputeDeleteWaitsWithProgressAndBackoff(t *testing.T) {
	f, srv := deletingCluster(t, 2*time.Minute)
	stdout, stderr, err := runCLI(t, srv, f.clock, "compute", "delete", "-n", "c", "--yes")
	if err != nil {
		t.Fatalf("delete: %v\nstderr:\n%s", err, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing: progress goes to stderr", stdout)
	}
	for _, want := range []string{
		"Deleting compute c: waiting for 1 running job: train (Running on node c-0) (0s)",
		"the delete waits for them to end (end them sooner with `shoal job cancel -n train`, or delete with --force)",
		"Deleting compute c: releasing 1 node",
		"Deleting compute c: deleted (2m",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if n := strings.Count(stderr, "waiting for 1 running job"); n != 1 {
		t.Errorf("the unchanged state was printed %d times, want once:\n%s", n, stderr)
	}
	if elapsed := f.clock.Now().Sub(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); elapsed < 2*time.Minute || elapsed > 2*time.Minute+15*time.Second {
		t.Errorf("the wait took %s on the clock, want just over 2 minutes", elapsed)
	}
	// 250 ms doubling to 5 s: about 30 checks of 2 requests (the nodes
	// are listed when a job or the release is new).
	t.Logf("a 2-minute delete made %d requests (%d checks of the compute)", f.count(""), f.count("GET "+computePath))
	if n := f.count(""); n > 90 {
		t.Errorf("a 2-minute wait made %d requests, want far fewer than 586", n)
	}
	if n := f.count("GET " + computePath); n < 10 || n > 40 {
		t.Errorf("%d checks of the compute in 2 minutes, want 10..40 (backoff to 5 s)", n)
	}
}

// --force cancels the compute's running and queued jobs before the
// delete, says so, and the delete then ends without waiting for them.
func TestComputeDeleteForceCancelsJobs(t *testing.T) {
	f, srv := deletingCluster(t, time.Hour, "later")
	_, stderr, err := runCLI(t, srv, f.clock, "compute", "delete", "-n", "c", "--yes", "--force")
	if err != nil {
		t.Fatalf("delete --force: %v\nstderr:\n%s", err, stderr)
	}
	for _, key := range []string{"POST /api/v1/workspaces/default/jobs/train/cancel", "POST /api/v1/workspaces/default/jobs/later/cancel"} {
		if n := f.count(key); n != 1 {
			t.Errorf("%s called %d times, want once", key, n)
		}
	}
	if !strings.Contains(stderr, "--force: canceled 2 jobs on compute c: train (Running), later (Queued)") {
		t.Errorf("stderr does not say what --force canceled:\n%s", stderr)
	}
	if strings.Contains(stderr, "the delete waits for them") {
		t.Errorf("a forced delete tells how to end the jobs sooner:\n%s", stderr)
	}
	if elapsed := f.clock.Now().Sub(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); elapsed > time.Minute {
		t.Errorf("a forced delete waited %s for jobs it canceled", elapsed)
	}
}

// An explicit -o json shows no progress at all: stderr stays empty.
func TestComputeDeleteQuietUnderOutputJSON(t *testing.T) {
	f, srv := deletingCluster(t, 30*time.Second)
	stdout, stderr, err := runCLI(t, srv, f.clock, "compute", "delete", "-n", "c", "--yes", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if stdout != "" || stderr != "" {
		t.Errorf("-o json: stdout %q, stderr %q; want both empty", stdout, stderr)
	}
}

// On a terminal the status is one line rewritten in place, the elapsed
// time moving on between checks, and cleared at the end.
func TestProgressLiveLine(t *testing.T) {
	old := cmdutil.IsTerminal
	cmdutil.IsTerminal = func(io.Writer) bool { return true }
	defer func() { cmdutil.IsTerminal = old }()
	f, srv := deletingCluster(t, 20*time.Second)
	_, stderr, err := runCLI(t, srv, f.clock, "compute", "delete", "-n", "c", "--yes")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\rDeleting compute c: waiting for 1 running job: train (Running on node c-0) (0s)\033[K",
		"\rDeleting compute c: waiting for 1 running job: train (Running on node c-0) (9s)\033[K",
		"\rDeleting compute c: releasing 1 node (22s)\033[K",
		"\r\033[KDeleting compute c: deleted (30s)\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%q", want, stderr)
		}
	}
	if !strings.HasPrefix(stderr, "compute c has 1 running job") {
		t.Errorf("the note does not come first, on a line of its own:\n%q", stderr)
	}
	if strings.HasSuffix(stderr, "\033[K") {
		t.Errorf("the live line is left on the screen:\n%q", stderr)
	}
}
