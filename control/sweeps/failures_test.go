package sweeps

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/pipelines"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/filestore"
	"github.com/shoal-ml/shoal/store/storetest"
)

type bench struct {
	t     *testing.T
	ctx   context.Context
	db    store.Store
	clock *storetest.Clock
	svc   *service.Services
}

func newBench(t *testing.T) *bench {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	if err := db.Update(ctx, func(tx store.Tx) error {
		c := teststore.Cluster(tx, "cpu")
		four := 4
		c.MaxInstances = &four
		return tx.InsertCompute(c)
	}); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: "local", Provider: "fake", Quota: catalog.DefaultQuotaLimits()}}, catalog.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	return &bench{t: t, ctx: ctx, db: db, clock: clock, svc: service.New(service.Config{Store: db, Catalog: cat, Files: files})}
}

// submit submits a random sweep of two trials at a time; limits adds
// to its limits.
func (b *bench) submit(name, limits string) {
	b.t.Helper()
	spec, err := sweepjob.DecodeSweepSpec([]byte(`{"type": "sweep", "name": "` + name + `", "compute": "azureml:cpu",
		"trial": {"command": "python train.py --lr ${{search_space.lr}}"},
		"search_space": {"lr": {"type": "uniform", "min_value": 0.001, "max_value": 0.1}},
		"sampling_algorithm": {"type": "random", "seed": 1},
		"objective": {"primary_metric": "acc", "goal": "maximize"},
		"limits": {"max_total_trials": 4, "max_concurrent_trials": 2` + limits + `}}`))
	if err != nil {
		b.t.Fatal(err)
	}
	if _, _, err := b.svc.SubmitSweep(b.ctx, "ws", spec); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bench) job(name string) *job.Job {
	b.t.Helper()
	var j *job.Job
	if err := b.db.View(b.ctx, func(tx store.Tx) (err error) { j, err = tx.GetJob("ws", name); return err }); err != nil {
		b.t.Fatal(err)
	}
	return j
}

// refusingCancels is the services refusing to cancel the jobs refuse
// names, as a store that fails their writes would.
type refusingCancels struct {
	*service.Services
	refuse func(name string) bool
}

func (r refusingCancels) CancelJob(ctx context.Context, workspace, name string) (*job.Job, error) {
	if r.refuse(name) {
		return nil, core.Errorf(core.EUNAVAILABLE, "the store refused the write")
	}
	return r.Services.CancelJob(ctx, workspace, name)
}

// One sweep whose pass fails (it reached limits.timeout and its trials
// cannot be canceled) does not fail the pass nor hold up another sweep:
// the failure is on it, retried with backoff on the injected clock, and
// after pipelines.GiveUpAfter failures in a row it ends Failed with the
// error. (Every pass failed, and logged, for as long as it lasted.)
func TestOneFailingSweepDoesNotHoldUpOthers(t *testing.T) {
	b := newBench(t)
	b.submit("bad", `, "timeout": 60`)
	b.submit("good", "")
	l := New(refusingCancels{b.svc, func(name string) bool { return strings.HasPrefix(name, "bad-") }})
	if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	now := b.clock.Advance(61 * time.Second)
	if err := l.RunOnce(b.ctx, now); err != nil {
		t.Fatalf("one sweep's failure failed the pass: %v", err)
	}
	bad := b.job("bad")
	if bad.Status != job.JobRunning || !strings.Contains(bad.StatusReason, "the store refused the write") || !strings.Contains(bad.StatusReason, "retried at") {
		t.Fatalf("bad: %s (%s), want its failure shown with its retry", bad.Status, bad.StatusReason)
	}
	// The other sweep goes on: a trial that ends is replaced.
	if err := b.db.Update(b.ctx, func(tx store.Tx) error {
		j, err := tx.GetJob("ws", job.SweepChildName("good", 0))
		if err != nil {
			return err
		}
		j.Status = job.JobCompleted
		j.Version++
		return tx.UpdateJob(j)
	}); err != nil {
		t.Fatal(err)
	}
	if err := l.RunOnce(b.ctx, now); err != nil {
		t.Fatal(err)
	}
	if g := b.job("good"); len(g.Trials) != 3 {
		t.Fatalf("good has %d trials (%s), want a third started", len(g.Trials), g.StatusReason)
	}
	for i := 0; b.job("bad").Status == job.JobRunning; i++ {
		if i > pipelines.GiveUpAfter {
			t.Fatalf("still Running after %d retries: %s", i, b.job("bad").StatusReason)
		}
		now = b.clock.Advance(10 * time.Minute)
		if err := l.RunOnce(b.ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	if bad := b.job("bad"); bad.Status != job.JobFailed || !strings.Contains(bad.Error, "the store refused the write") {
		t.Fatalf("bad: %s (%s), want Failed with the error", bad.Status, bad.Error)
	}
}

// Cancel always wins: a trial the sweep recorded but never submitted (a
// pass ended between the two) does not keep a canceled sweep waiting
// for it. (It counted as running, and the sweep stayed CancelRequested
// for good.)
func TestCancelWinsOverAnUnsubmittedTrial(t *testing.T) {
	b := newBench(t)
	b.submit("sw", "")
	if err := b.db.Update(b.ctx, func(tx store.Tx) error {
		j, err := tx.GetJob("ws", "sw")
		if err != nil {
			return err
		}
		j.Status = job.JobRunning
		j.Trials = []*job.SweepTrialStatus{{Index: 0, Job: job.SweepChildName("sw", 0), Parameters: map[string]any{"lr": 0.01}, Status: job.JobNotStarted}}
		j.Version++
		return tx.UpdateJob(j)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.CancelJob(b.ctx, "ws", "sw"); err != nil {
		t.Fatal(err)
	}
	l := New(b.svc)
	if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	sw := b.job("sw")
	if sw.Status != job.JobCanceled {
		t.Fatalf("sweep %s (%s), want Canceled", sw.Status, sw.StatusReason)
	}
	// Its end is in its log, as canceled (the notifier's job_canceled).
	evs, err := b.svc.ListJobEvents(b.ctx, "ws", "sw")
	if err != nil {
		t.Fatal(err)
	}
	var ends []string
	for _, e := range evs {
		if e.Kind == core.EventJobCompleted || e.Kind == core.EventJobFailed || e.Kind == core.EventJobCanceled {
			ends = append(ends, e.Kind)
		}
	}
	if len(ends) != 1 || ends[0] != core.EventJobCanceled {
		t.Errorf("sweep's end events %v, want one canceled", ends)
	}
	if tr := sw.Trials[0]; tr.Status != job.JobNotStarted || !strings.Contains(tr.Reason, "will not run") {
		t.Errorf("trial %+v, want never started, saying why", tr)
	}
}
