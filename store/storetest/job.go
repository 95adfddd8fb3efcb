package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	jobkind "github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// artifact is an artifact ID as the CLI uploads them.
var artifact = "sha256:" + strings.Repeat("ab", 32)

// fullJob returns a job with every field set, including the fields JSON
// leaves out, pointers to zero values and an inline environment. Values of
// `any` fields are what JSON decodes (strings, float64, bool, []any,
// map[string]any), as a job read from a request holds.
func fullJob(workspace, name, compute string, seq int64, at time.Time) *jobkind.Job {
	return &jobkind.Job{
		JobSpec: jobkind.JobSpec{
			Name:           name,
			Type:           "command",
			DisplayName:    "Train ✓",
			ExperimentName: "vision",
			Description:    `ResNet "50" \ fine-tune`,
			Tags:           map[string]string{"team": "vision", "empty": ""},
			Command:        "python train.py --lr ${{inputs.lr}} --data ${{inputs.data}}",
			Code:           artifact,
			Environment: map[string]any{
				"image":      "mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04",
				"conda_file": map[string]any{"dependencies": []any{"python=3.11", map[string]any{"pip": []any{"torch"}}}},
			},
			EnvironmentVariables: map[string]string{"NCCL_DEBUG": "INFO"},
			Compute:              compute,
			Inputs: map[string]*jobkind.JobInput{
				"lr":     {Value: 0.01},
				"epochs": {Value: float64(0)},
				"flag":   {Value: false},
				"label":  {Value: "a \"b\""},
				"data":   {Type: "uri_folder", Path: artifact, Mode: "ro_mount"},
			},
			Outputs:       map[string]*jobkind.JobOutput{"model": {Type: "uri_folder", Mode: "rw_mount"}},
			Resources:     &jobkind.JobResources{InstanceCount: 2, InstanceType: "Standard_NC6s_v3", ShmSize: "8g"},
			Distribution:  &jobkind.Distribution{Type: jobkind.DistributionPyTorch, ProcessCountPerInstance: 1},
			Limits:        &jobkind.JobLimits{Timeout: 3600},
			QueueSettings: &jobkind.QueueSettings{JobTier: "standard", Priority: jobkind.PriorityHigh},
			Retries:       stcheck.Ptr(0),
		},
		Workspace:        workspace,
		ID:               "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/" + workspace + "/jobs/" + name,
		Status:           jobkind.JobRunning,
		StatusReason:     "running on 2 nodes",
		CreatedBy:        "alice",
		CreatedOn:        at,
		StartTime:        stcheck.Ptr(at.Add(time.Second)),
		EndTime:          stcheck.Ptr(at.Add(2 * time.Second)),
		Seq:              seq,
		AttemptCount:     3,
		CurrentAttemptID: "att-3",
		FailedAttempts:   1,
		InfraRequeues:    1,
		ExitCode:         stcheck.Ptr(0),
		Error:            "node lost",
		SpecHash:         "spec-" + name,
		Version:          5,
	}
}

// queuedJob returns a job as submitted, with the given priority ("" for
// none, which is medium).
func queuedJob(workspace, name, compute string, seq int64, priority string, at time.Time) *jobkind.Job {
	j := &jobkind.Job{
		JobSpec:   jobkind.JobSpec{Name: name, Type: "command", Command: "echo hi", Compute: compute},
		Workspace: workspace,
		Status:    jobkind.JobQueued,
		CreatedOn: at,
		Seq:       seq,
		Version:   1,
	}
	if priority != "" {
		j.QueueSettings = &jobkind.QueueSettings{Priority: priority}
	}
	return j
}

func getJob(t *testing.T, s store.Store, workspace, name string) *jobkind.Job {
	t.Helper()
	var j *jobkind.Job
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		j, err = tx.GetJob(workspace, name)
		return err
	})
	return j
}

func insertJobs(t *testing.T, s store.Store, jobs ...*jobkind.Job) {
	t.Helper()
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, j := range jobs {
			if err := tx.InsertJob(j); err != nil {
				return err
			}
		}
		return nil
	})
}

func testJobRoundTrip(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	full := fullJob("Prod", "train-1", "GPU-Cluster", 42, at)
	minimal := queuedJob("prod", "echo", "cpu", 1, "", at)
	insertJobs(t, s, full, minimal)
	stcheck.Equal(t, "GetJob of a full job", getJob(t, s, "Prod", "train-1"), full)
	stcheck.Equal(t, "GetJob of a minimal job", getJob(t, s, "prod", "echo"), minimal)

	// An environment given by name.
	named := fullJob("prod", "train-2", "gpu", 43, at)
	named.Environment = "azureml:pytorch:1"
	named.Tags, named.Inputs, named.Outputs, named.Retries, named.ExitCode = nil, nil, nil, stcheck.Ptr(2), stcheck.Ptr(-1)
	insertJobs(t, s, named)
	stcheck.Equal(t, "GetJob of a job with a named environment", getJob(t, s, "prod", "train-2"), named)

	err := s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetJob("prod", "missing")
		return err
	})
	stcheck.WantCode(t, "GetJob of a missing job", err, core.ENOTFOUND)
	err = s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetJob("staging", "train-1")
		return err
	})
	stcheck.WantCode(t, "GetJob in another workspace", err, core.ENOTFOUND)
}

func testJobNames(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	upper := queuedJob("Prod", "Train", "gpu", 1, "", at)
	lower := queuedJob("prod", "train", "gpu", 2, "", at)
	// Job names compare exactly: these are two jobs.
	insertJobs(t, s, upper, lower)
	for _, ws := range []string{"Prod", "prod", "PROD"} {
		stcheck.Equal(t, "GetJob("+ws+", Train)", getJob(t, s, ws, "Train"), upper)
		stcheck.Equal(t, "GetJob("+ws+", train)", getJob(t, s, ws, "train"), lower)
	}
	err := s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetJob("prod", "TRAIN")
		return err
	})
	stcheck.WantCode(t, "GetJob with the name in another case", err, core.ENOTFOUND)

	// Workspaces compare case-insensitively.
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertJob(fullJob("PROD", "Train", "cpu", 3, at))
	})
	stcheck.WantCode(t, "InsertJob of a taken name", err, core.ECONFLICT)
	stcheck.Equal(t, "job after a failed insert", getJob(t, s, "prod", "Train"), upper)

	// The same name in another workspace is another job.
	other := fullJob("staging", "Train", "gpu", 4, at)
	insertJobs(t, s, other)
	stcheck.Equal(t, "job of another workspace", getJob(t, s, "Staging", "Train"), other)
}

func testJobUpdate(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	insertJobs(t, s, queuedJob("Prod", "train", "gpu", 1, jobkind.PriorityLow, at))
	later := stcheck.Now(clock.Advance(time.Minute))
	var running *jobkind.Job
	stcheck.Update(t, s, func(tx store.Tx) error {
		j, err := tx.GetJob("prod", "train")
		if err != nil {
			return err
		}
		j.Status, j.StatusReason = jobkind.JobRunning, "running"
		j.StartTime, j.AttemptCount, j.CurrentAttemptID = stcheck.Ptr(tx.Now()), 1, "att-1"
		j.Version++
		if err := tx.UpdateJob(j); err != nil {
			return err
		}
		got, err := tx.GetJob("PROD", "train")
		if err != nil {
			return err
		}
		stcheck.Equal(t, "GetJob in the updating transaction", got, j)
		queued, err := tx.ListQueuedJobs()
		if err != nil || len(queued) != 0 {
			t.Errorf("ListQueuedJobs in the updating transaction: %d jobs, %v; want none", len(queued), err)
		}
		running = j
		return nil
	})
	got := getJob(t, s, "prod", "train")
	stcheck.Equal(t, "GetJob after update", got, running)
	if got.Version != 2 || !got.StartTime.Equal(later) || !got.CreatedOn.Equal(at) {
		t.Errorf("after update: version %d, start %v, created %v", got.Version, got.StartTime, got.CreatedOn)
	}

	// Every field can change, including those JSON leaves out.
	stcheck.Update(t, s, func(tx store.Tx) error {
		j := fullJob("prod", "train", "CPU", 9, later)
		j.Workspace = "Prod"
		running = j
		return tx.UpdateJob(j)
	})
	stcheck.Equal(t, "GetJob after replacing every field", getJob(t, s, "prod", "train"), running)
	var list []*jobkind.Job
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		list, err = tx.ListJobs(jobkind.JobFilter{Workspace: "prod", Compute: "cpu", Statuses: []string{jobkind.JobRunning}})
		return err
	})
	stcheck.Equal(t, "ListJobs by the updated compute and status", list, []*jobkind.Job{running})

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.UpdateJob(queuedJob("prod", "missing", "gpu", 2, "", later))
	})
	stcheck.WantCode(t, "UpdateJob of a missing job", err, core.ENOTFOUND)
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.UpdateJob(queuedJob("staging", "train", "gpu", 2, "", later))
	})
	stcheck.WantCode(t, "UpdateJob in another workspace", err, core.ENOTFOUND)
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.UpdateJob(queuedJob("prod", "TRAIN", "gpu", 2, "", later))
	})
	stcheck.WantCode(t, "UpdateJob with the name in another case", err, core.ENOTFOUND)
}

func testJobList(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	job := func(ws, name, compute, status string, seq int64) *jobkind.Job {
		j := queuedJob(ws, name, compute, seq, "", at)
		j.Status = status
		return j
	}
	jobs := map[string]*jobkind.Job{}
	var all []*jobkind.Job
	for _, j := range []*jobkind.Job{
		job("Prod", "a", "GPU", jobkind.JobQueued, 5),
		job("prod", "b", "gpu", jobkind.JobRunning, 2),
		job("prod", "c", "cpu", jobkind.JobCompleted, 9),
		job("Prod", "d", "cpu", jobkind.JobQueued, 7),
		job("prod", "e", "Gpu", jobkind.JobFailed, 1),
		job("staging", "f", "gpu", jobkind.JobQueued, 3),
		job("staging", "g", "gpu", jobkind.JobRunning, 8),
	} {
		jobs[j.Name] = j
		all = append(all, j)
	}
	insertJobs(t, s, all...)
	list := func(filter jobkind.JobFilter, names string) {
		t.Helper()
		var got []*jobkind.Job
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.ListJobs(filter)
			return err
		})
		want := []*jobkind.Job{}
		for _, n := range strings.Fields(names) {
			want = append(want, jobs[n])
		}
		if len(got) == 0 && len(want) == 0 {
			return
		}
		stcheck.Equal(t, "ListJobs("+stcheck.Show(filter)+")", got, want)
	}
	q, r := jobkind.JobQueued, jobkind.JobRunning
	list(jobkind.JobFilter{Workspace: "prod"}, "c d a b e")
	list(jobkind.JobFilter{Workspace: "PROD", Statuses: []string{q}}, "d a")
	list(jobkind.JobFilter{Workspace: "prod", Statuses: []string{q, r}}, "d a b")
	list(jobkind.JobFilter{Workspace: "prod", Compute: "gpu"}, "a b e")
	list(jobkind.JobFilter{Workspace: "prod", Compute: "GPU", Statuses: []string{q}}, "a")
	list(jobkind.JobFilter{Workspace: "prod", Limit: 2}, "c d")
	list(jobkind.JobFilter{Workspace: "prod", Statuses: []string{q, r, jobkind.JobFailed}, Limit: 2}, "d a")
	list(jobkind.JobFilter{Workspace: "prod", Statuses: []string{}}, "c d a b e")
	list(jobkind.JobFilter{Workspace: "staging"}, "g f")
	list(jobkind.JobFilter{Workspace: "staging", Compute: "cpu"}, "")
	list(jobkind.JobFilter{Workspace: "prod", Statuses: []string{jobkind.JobCanceled}}, "")
	list(jobkind.JobFilter{Workspace: "nope"}, "")
	// An empty workspace lists every workspace.
	list(jobkind.JobFilter{}, "c g d a f b e")
	list(jobkind.JobFilter{Statuses: []string{q}}, "d a f")
	list(jobkind.JobFilter{Compute: "gpu", Statuses: []string{r}, Limit: 1}, "g")
}

func testJobQueue(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	low, medium, high := jobkind.PriorityLow, jobkind.PriorityMedium, jobkind.PriorityHigh
	jobs := map[string]*jobkind.Job{}
	var all []*jobkind.Job
	// Neither names nor workspaces sort like Seq, nor are the jobs inserted
	// in Seq order.
	for _, j := range []*jobkind.Job{
		queuedJob("ws-a", "a6", "gpu", 6, low, at),
		queuedJob("ws-b", "d3", "gpu", 3, high, at),
		queuedJob("ws-b", "e2", "gpu", 2, "", at),
		queuedJob("ws-c", "f1", "gpu", 1, low, at),
		queuedJob("ws-a", "c4", "cpu", 4, high, at),
		queuedJob("ws-a", "b5", "cpu", 5, medium, at),
		queuedJob("ws-a", "r7", "gpu", 7, high, at),
		queuedJob("ws-b", "n8", "gpu", 0, high, at),
		queuedJob("ws-b", "c9", "gpu", 9, high, at),
	} {
		jobs[j.Name] = j
		all = append(all, j)
	}
	jobs["r7"].Status = jobkind.JobRunning
	// Images go with the refs: a6's, not e2's build nor b5's host run.
	jobs["a6"].ResolvedEnvironment = &asset.EnvironmentSpec{Image: "ghcr.io/acme/train:2"}
	jobs["e2"].ResolvedEnvironment = &asset.EnvironmentSpec{Build: &asset.EnvironmentBuild{Path: "."}}
	jobs["n8"].Status = jobkind.JobNotStarted
	jobs["c9"].Status = jobkind.JobCanceled
	queue := func(what, names string) {
		t.Helper()
		var got []*jobkind.Job
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.ListQueuedJobs()
			return err
		})
		want := []*jobkind.Job{}
		for _, n := range strings.Fields(names) {
			want = append(want, jobs[n])
		}
		if len(got) == 0 && len(want) == 0 {
			return
		}
		stcheck.Equal(t, "ListQueuedJobs "+what, got, want)
	}
	queue("of an empty store", "")
	insertJobs(t, s, all...)
	queue("", "d3 c4 e2 b5 f1 a6")

	// A priority change moves the job; a job that starts leaves the queue;
	// one requeued comes back at its place by Seq.
	stcheck.Update(t, s, func(tx store.Tx) error {
		jobs["a6"].QueueSettings = &jobkind.QueueSettings{Priority: high}
		jobs["d3"].Status = jobkind.JobRunning
		jobs["r7"].Status = jobkind.JobQueued
		for _, n := range []string{"a6", "d3", "r7"} {
			if err := tx.UpdateJob(jobs[n]); err != nil {
				return err
			}
		}
		return nil
	})
	queue("after updates", "c4 a6 r7 e2 b5 f1")

	// The light forms of the queue agree with it: the refs of every job
	// submitted in a window (all at once here: by workspace, then name),
	// and the heads of each compute's queue with each queue's demand.
	var refs, heads []store.QueuedJobRef
	var demand map[string]int
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		if refs, err = tx.ListQueuedJobsCreated(at.Add(-time.Second), at, 100); err != nil {
			return err
		}
		// Two heads of ws-a/gpu, one of the others (zero counts as one).
		heads, demand, err = tx.ListQueueHeads(func(key string) int {
			if key == "ws-a/gpu" {
				return 2
			}
			return 0
		})
		return err
	})
	names := func(rs []store.QueuedJobRef) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return strings.Join(out, " ")
	}
	if got := names(refs); got != "a6 b5 c4 r7 e2 f1" {
		t.Errorf("ListQueuedJobsCreated = %q, want every queued job", got)
	}
	for _, rs := range [][]store.QueuedJobRef{refs, heads} {
		for _, r := range rs {
			if want := jobs[r.Name].ResolvedImage(); r.Image != want {
				t.Errorf("ref %s: Image %q, want %q", r.Name, r.Image, want)
			}
			// The submission time, for the queue-wait watcher and gauge.
			if want := jobs[r.Name].CreatedOn; !r.CreatedOn.Equal(want) {
				t.Errorf("ref %s: CreatedOn %v, want %v", r.Name, r.CreatedOn, want)
			}
		}
	}
	if refs[0].Name != "a6" || refs[0].Image != "ghcr.io/acme/train:2" {
		t.Errorf("a6's ref: %s, Image %q, want its environment's image", refs[0].Name, refs[0].Image)
	}
	// ws-a/cpu c4, ws-a/gpu a6 r7, ws-b/gpu e2, ws-c/gpu f1.
	if got := names(heads); got != "c4 a6 r7 e2 f1" {
		t.Errorf("ListQueueHeads = %q, want %q", got, "c4 a6 r7 e2 f1")
	}
	wantDemand := map[string]int{"ws-a/cpu": 2, "ws-a/gpu": 2, "ws-b/gpu": 1, "ws-c/gpu": 1}
	for k, v := range wantDemand {
		if demand[k] != v {
			t.Errorf("ListQueueHeads demand[%s] = %d, want %d (all: %v)", k, demand[k], v, demand)
		}
	}
	// One compute at a time: the computes with queued jobs, sorted, and
	// each one's whole queue, which together are the queue.
	var computes []string
	perCompute := map[string]string{}
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		if computes, err = tx.ListQueueComputes(); err != nil {
			return err
		}
		for _, k := range computes {
			ws, comp, _ := strings.Cut(k, "/")
			// Pages of one job: each compute's queue in order, one job
			// a page (no two of its jobs share a priority and a seq),
			// and the slice handed over reused.
			var q []store.QueuedJobRef
			pages := 0
			err := tx.PageComputeQueue(strings.ToUpper(ws), comp, 1, func(page []store.QueuedJobRef) error {
				pages++
				if len(page) != 1 {
					t.Errorf("PageComputeQueue(%s, 1) handed a page of %d jobs", k, len(page))
				}
				q = append(q, page...)
				return nil
			})
			if err != nil {
				return err
			}
			if pages != len(q) {
				t.Errorf("PageComputeQueue(%s, 1): %d pages of %d jobs", k, pages, len(q))
			}
			perCompute[k] = names(q)
			// One page holds the whole queue; fn's error ends the read.
			whole := 0
			if err := tx.PageComputeQueue(ws, comp, 1000, func(page []store.QueuedJobRef) error {
				whole++
				if names(page) != names(q) {
					t.Errorf("PageComputeQueue(%s, 1000) = %q, want %q", k, names(page), names(q))
				}
				return nil
			}); err != nil || whole != 1 {
				t.Errorf("PageComputeQueue(%s, 1000): %d pages, %v; want 1", k, whole, err)
			}
			stop := errors.New("stop")
			if err := tx.PageComputeQueue(ws, comp, 1, func([]store.QueuedJobRef) error { return stop }); !errors.Is(err, stop) {
				t.Errorf("PageComputeQueue(%s) with fn failing = %v, want fn's error", k, err)
			}
		}
		return nil
	})
	if got, want := strings.Join(computes, " "), "ws-a/cpu ws-a/gpu ws-b/gpu ws-c/gpu"; got != want {
		t.Errorf("ListQueueComputes = %q, want %q", got, want)
	}
	wantQueues := map[string]string{"ws-a/cpu": "c4 b5", "ws-a/gpu": "a6 r7", "ws-b/gpu": "e2", "ws-c/gpu": "f1"}
	for k, v := range wantQueues {
		if perCompute[k] != v {
			t.Errorf("PageComputeQueue(%s) = %q, want %q", k, perCompute[k], v)
		}
	}

	// One compute's head with its job, names in any case: the ref the
	// heads hold and the job as GetJob reads it; an empty queue, none.
	var head, none *store.QueuedJobRef
	var headJob, noJob *jobkind.Job
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		if head, headJob, err = tx.QueueHeadJob("WS-A", "Gpu"); err != nil {
			return err
		}
		none, noJob, err = tx.QueueHeadJob("ws-a", "nope")
		return err
	})
	if head == nil || headJob == nil {
		t.Fatalf("QueueHeadJob(ws-a, gpu) = %v, %v, want a6", head, headJob)
	}
	stcheck.Equal(t, "QueueHeadJob's ref", *head, heads[1])
	stcheck.Equal(t, "QueueHeadJob's job", headJob, getJob(t, s, "ws-a", "a6"))
	if none != nil || noJob != nil {
		t.Errorf("QueueHeadJob of an empty queue = %v, %v, want none", none, noJob)
	}

	// A page that would split jobs of equal priority and seq ends after
	// them: the next page starts where the queue's order is strict.
	insertJobs(t, s, queuedJob("ws-t", "t1", "tie", 1, high, at), queuedJob("ws-t", "t2", "tie", 2, high, at),
		queuedJob("ws-t", "t3", "tie", 2, high, at), queuedJob("ws-t", "t4", "tie", 3, high, at))
	var pages []string
	stcheck.View(t, s, func(tx store.Tx) error {
		return tx.PageComputeQueue("ws-t", "tie", 2, func(page []store.QueuedJobRef) error {
			ns := names(page)
			if ns == "t1 t3 t2" {
				ns = "t1 t2 t3" // equal priority and seq: either order
			}
			pages = append(pages, ns)
			return nil
		})
	})
	if got, want := strings.Join(pages, " | "), "t1 t2 t3 | t4"; got != want {
		t.Errorf("PageComputeQueue(ws-t, tie, 2) pages = %q, want %q", got, want)
	}
}

func testNextSeq(t *testing.T, s store.Store, clock *stcheck.Clock) {
	next := func(tx store.Tx, counter string, want int64) {
		t.Helper()
		got, err := tx.NextSeq(counter)
		if err != nil {
			t.Fatalf("NextSeq(%q): %v", counter, err)
		}
		if got != want {
			t.Errorf("NextSeq(%q) = %d, want %d", counter, got, want)
		}
	}
	stcheck.Update(t, s, func(tx store.Tx) error {
		next(tx, "job", 1)
		next(tx, "job", 2)
		next(tx, "other", 1)
		next(tx, "Job", 1) // counter names compare exactly
		return nil
	})
	stcheck.Update(t, s, func(tx store.Tx) error {
		next(tx, "job", 3)
		next(tx, "other", 2)
		return nil
	})

	// A rolled-back transaction gives its values back.
	errFail := errors.New("fail on purpose")
	err := s.Update(t.Context(), func(tx store.Tx) error {
		next(tx, "job", 4)
		next(tx, "new", 1)
		return errFail
	})
	if !errors.Is(err, errFail) {
		t.Fatalf("Update returned %v, want fn's error", err)
	}
	stcheck.Update(t, s, func(tx store.Tx) error {
		next(tx, "job", 4)
		next(tx, "new", 1)
		next(tx, "other", 3)
		return nil
	})

	// Concurrent transactions never get the same value.
	const writers, perWriter = 4, 25
	seen := make(chan int64, writers*perWriter)
	errs := make(chan error, writers*perWriter)
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range perWriter {
				err := s.Update(t.Context(), func(tx store.Tx) error {
					v, err := tx.NextSeq("load")
					seen <- v
					return err
				})
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(seen)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := map[int64]bool{}
	for v := range seen {
		if got[v] {
			t.Errorf("NextSeq(load) gave %d twice", v)
		}
		got[v] = true
	}
	for v := int64(1); v <= writers*perWriter; v++ {
		if !got[v] {
			t.Errorf("NextSeq(load) never gave %d", v)
			break
		}
	}
}

// testTimes checks that the times of nodes, jobs and attempts read back in
// UTC at whole microseconds when written with nanoseconds in another zone.
func testTimes(t *testing.T, s store.Store, clock *stcheck.Clock) {
	raw := clock.Now() // nanoseconds, CET
	if raw.Nanosecond()%1000 == 0 || raw.Location() == time.UTC {
		t.Fatalf("clock time %v is already in stored form", raw)
	}
	want := stcheck.Now(raw)
	check := func(what string, got time.Time) {
		t.Helper()
		if got != want { // == also compares the location
			t.Errorf("%s = %v (%s), want %v (UTC)", what, got, got.Location(), want)
		}
	}
	checkPtr := func(what string, got *time.Time) {
		t.Helper()
		if got == nil {
			t.Errorf("%s is nil", what)
			return
		}
		check(what, *got)
	}
	n := &node.Node{ID: "node-1", Workspace: "prod", CreatedOn: raw, ReadyOn: &raw, IdleSince: &raw, LastHeartbeat: raw, JoinTokenExpires: raw}
	j := queuedJob("prod", "job", "gpu", 1, "", raw)
	j.StartTime, j.EndTime = &raw, &raw
	a := &jobkind.Attempt{ID: "att-1", Workspace: "prod", JobName: "job", Number: 1, CreatedOn: raw, StartTime: &raw, EndTime: &raw,
		Ranks: []*jobkind.RankStatus{{Rank: 0, NodeID: "node-1", StartTime: &raw, EndTime: &raw}}}
	stcheck.Update(t, s, func(tx store.Tx) error {
		return errors.Join(tx.InsertNode(n), tx.InsertJob(j), tx.InsertAttempt(a))
	})
	if raw != clock.Now() {
		t.Errorf("the store wrote through a time pointer of its argument")
	}
	stcheck.View(t, s, func(tx store.Tx) error {
		n, err := tx.GetNode("node-1")
		if err != nil {
			return err
		}
		check("node CreatedOn", n.CreatedOn)
		checkPtr("node ReadyOn", n.ReadyOn)
		checkPtr("node IdleSince", n.IdleSince)
		check("node LastHeartbeat", n.LastHeartbeat)
		check("node JoinTokenExpires", n.JoinTokenExpires)
		j, err := tx.GetJob("prod", "job")
		if err != nil {
			return err
		}
		check("job CreatedOn", j.CreatedOn)
		checkPtr("job StartTime", j.StartTime)
		checkPtr("job EndTime", j.EndTime)
		a, err := tx.GetAttempt("att-1")
		if err != nil {
			return err
		}
		check("attempt CreatedOn", a.CreatedOn)
		checkPtr("attempt StartTime", a.StartTime)
		checkPtr("attempt EndTime", a.EndTime)
		if len(a.Ranks) != 1 {
			return fmt.Errorf("attempt has %d ranks, want 1", len(a.Ranks))
		}
		checkPtr("rank StartTime", a.Ranks[0].StartTime)
		checkPtr("rank EndTime", a.Ranks[0].EndTime)
		return nil
	})
}
