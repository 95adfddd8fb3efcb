package pipelines

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/filestore"
	"github.com/shoal-ml/shoal/store/storetest"
)

// bench is a store with a cluster, the real services over it and a file
// store, for the pipelines of a test.
type bench struct {
	t     *testing.T
	ctx   context.Context
	db    store.Store
	clock *storetest.Clock
	svc   *service.Services
	files *filestore.Store
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
	return &bench{t: t, ctx: ctx, db: db, clock: clock, svc: service.New(service.Config{Store: db, Catalog: cat, Files: files}), files: files}
}

// submit submits the pipeline as name: step a declares a
// uri_folder output, b reads it, c reads nothing.
func (b *bench) submit(name string) {
	b.t.Helper()
	spec, err := pipelinejob.DecodePipelineSpec([]byte(`{"type": "pipeline", "name": "` + name + `", "settings": {"default_compute": "azureml:cpu"},
		"jobs": {
			"a": {"command": "true", "outputs": {"o": {"type": "uri_folder"}}},
			"b": {"command": "ls ${{inputs.i}}", "inputs": {"i": "${{parent.jobs.a.outputs.o}}"}},
			"c": {"command": "sleep 1000"}}}`))
	if err != nil {
		b.t.Fatal(err)
	}
	if _, _, err := b.svc.SubmitPipeline(b.ctx, "ws", spec); err != nil {
		b.t.Fatal(err)
	}
}

// end ends a step's child job with status as its agent's report would,
// leaving no outputs (the agent uploads none when the folder is empty).
func (b *bench) end(name, status string) {
	b.t.Helper()
	if err := b.db.Update(b.ctx, func(tx store.Tx) error {
		j, err := tx.GetJob("ws", name)
		if err != nil {
			return err
		}
		now := tx.Now()
		j.Status, j.AttemptCount, j.EndTime = status, 1, &now
		j.Version++
		return tx.UpdateJob(j)
	}); err != nil {
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

func (b *bench) events(name string) []*core.Event {
	b.t.Helper()
	evs, err := b.svc.ListJobEvents(b.ctx, "ws", name)
	if err != nil {
		b.t.Fatal(err)
	}
	return evs
}

func stepOf(p *job.Job, name string) *job.PipelineStepStatus {
	for _, s := range p.Steps {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// failingOutputs is the services with a file store that does not answer
// for the children fail names.
type failingOutputs struct {
	*service.Services
	fail func(child string) bool
}

func (f failingOutputs) ChildOutputArtifact(ctx context.Context, child *job.Job, output string) (string, error) {
	if f.fail(child.Name) {
		return "", core.Errorf(core.EUNAVAILABLE, "the file store does not answer")
	}
	return f.Services.ChildOutputArtifact(ctx, child, output)
}

// The pipeline: step a declares a uri_folder output and leaves
// it empty, so its agent uploads nothing; b reads it. The empty folder
// is an empty archive that b gets as its input, and the pipeline
// completes. (It stayed "Running: 0 of 2 steps completed", every pass
// failing with "job p-a left no outputs".)
func TestEmptyOutputFolderIsPassedOn(t *testing.T) {
	b := newBench(t)
	b.submit("p")
	l := New(b.svc)
	if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	b.end("p-a", job.JobCompleted)
	if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
		t.Fatalf("the pass failed: %v", err)
	}
	p := b.job("p")
	st := stepOf(p, "b")
	if st.Job != "p-b" || stepOf(p, "a").Outputs["o"] == "" {
		t.Fatalf("b: %+v, a's outputs %v (%s): want b submitted with a's empty folder", st, stepOf(p, "a").Outputs, p.StatusReason)
	}
	in := b.job("p-b").Inputs["i"]
	if in == nil || in.Path == "" {
		t.Fatalf("b's input: %+v, want a's output folder", in)
	}
	b.end("p-b", job.JobCompleted)
	b.end("p-c", job.JobCompleted)
	if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if p := b.job("p"); p.Status != job.JobCompleted {
		t.Fatalf("pipeline %s (%s), want Completed", p.Status, p.StatusReason)
	}
}

// Cancel always wins: a pipeline whose pass fails (the output of its
// completed step cannot be read) is canceled at once when asked, by the
// next pass, its running step canceled and its step that never ran
// saying why. (It stayed CancelRequested for good: the error returned
// before the cancel was looked at.)
func TestCancelWinsOverAFailingPipeline(t *testing.T) {
	b := newBench(t)
	b.submit("p")
	l := New(failingOutputs{b.svc, func(string) bool { return true }})
	if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	b.end("p-a", job.JobCompleted)
	_ = l.RunOnce(b.ctx, b.clock.Now())
	if p := b.job("p"); p.Status != job.JobRunning || !strings.Contains(p.StatusReason, "does not answer") {
		t.Fatalf("pipeline %s (%s): want Running, its failure shown", p.Status, p.StatusReason)
	}
	if _, err := b.svc.CancelJob(b.ctx, "ws", "p"); err != nil {
		t.Fatal(err)
	}
	// The same instant: the pipeline's backoff does not hold up a cancel.
	if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	p := b.job("p")
	if p.Status != job.JobCanceled || p.EndTime == nil {
		t.Fatalf("pipeline %s (%s), want Canceled", p.Status, p.StatusReason)
	}
	// Its end is recorded as canceled (the notifier's job_canceled).
	wantOneEnd(t, "pipeline", b.events("p"), core.EventJobCanceled)
	if c := b.job("p-c"); c.Status != job.JobCanceled {
		t.Errorf("running step c is %s, want Canceled", c.Status)
	}
	if st := stepOf(p, "b"); st.Job != "" || !strings.Contains(st.Reason, "will not run") {
		t.Errorf("b: %+v, want never submitted, saying why", st)
	}
}

// One pipeline whose pass fails does not fail the pass, nor hold up the
// others: its failure is on it (the reason and one event per retry, not
// per pass), it is retried with backoff on the injected clock, and after
// GiveUp failures in a row it ends Failed with the error, its running
// step canceled.
func TestOneFailingPipelineDoesNotHoldUpOthers(t *testing.T) {
	b := newBench(t)
	b.submit("bad")
	b.submit("good")
	l := New(failingOutputs{b.svc, func(child string) bool { return child == "bad-a" }})
	if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	b.end("bad-a", job.JobCompleted)
	b.end("good-a", job.JobCompleted)
	if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
		t.Fatalf("one pipeline's failure failed the pass: %v", err)
	}
	if st := stepOf(b.job("good"), "b"); st.Job != "good-b" {
		t.Fatalf("good's b: %+v, want submitted in the same pass", st)
	}
	bad := b.job("bad")
	if bad.Status != job.JobRunning || !strings.Contains(bad.StatusReason, "does not answer") || !strings.Contains(bad.StatusReason, "retried at") {
		t.Fatalf("bad: %s (%s), want Running with its failure and retry", bad.Status, bad.StatusReason)
	}
	failedEvents := func() int {
		n := 0
		for _, e := range b.events("bad") {
			if e.Kind == EventAdvanceFailed {
				n++
			}
		}
		return n
	}
	// Passes within the wait neither retry nor record it again.
	for range 3 {
		if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if n := failedEvents(); n != 1 {
		t.Fatalf("%d failure events after one failure and three passes within its wait", n)
	}
	for i := 0; b.job("bad").Status == job.JobRunning; i++ {
		if i > GiveUpAfter {
			t.Fatalf("still %s after %d retries: %s", job.JobRunning, i, b.job("bad").StatusReason)
		}
		b.clock.Advance(10 * time.Minute)
		if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	bad = b.job("bad")
	if bad.Status != job.JobFailed || !strings.Contains(bad.Error, "does not answer") || !strings.Contains(bad.Error, "times in a row") {
		t.Fatalf("bad: %s (%s), want Failed with the error", bad.Status, bad.Error)
	}
	wantOneEnd(t, "a pipeline given up", b.events("bad"), core.EventJobFailed)
	if n := failedEvents(); n != GiveUpAfter-1 {
		t.Errorf("%d failure events for %d failures before giving up", n, GiveUpAfter-1)
	}
	if c := b.job("bad-c"); c.Status != job.JobCanceled {
		t.Errorf("bad's running step is %s after it failed, want Canceled", c.Status)
	}
	if g := b.job("good"); g.Status != job.JobRunning {
		t.Errorf("good: %s (%s), want still Running", g.Status, g.StatusReason)
	}
}

// A pipeline that keeps failing is logged once per retry, never once per
// pass: ten of them, passes every 2 s for 11 minutes (330 passes), log
// at most GiveUpAfter lines each and then end Failed. (Every pass
// returned, and the server logged, every one of their errors: 222 such
// pipelines wrote 112 KB/s.)
func TestAFailingPipelineIsLoggedOncePerRetry(t *testing.T) {
	b := newBench(t)
	var logs strings.Builder
	b.svc = service.New(service.Config{Store: b.db, Catalog: b.svc.Catalog(), Files: b.svc.Files(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	const n = 10
	for i := range n {
		b.submit(fmt.Sprintf("p%d", i))
	}
	l := New(failingOutputs{b.svc, func(string) bool { return true }})
	if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		b.end(fmt.Sprintf("p%d-a", i), job.JobCompleted)
	}
	for range 330 {
		if err := l.RunOnce(b.ctx, b.clock.Advance(2*time.Second)); err != nil {
			t.Fatalf("the pass failed: %v", err)
		}
	}
	lines := strings.Count(logs.String(), "advancing a pipeline failed")
	if lines > n*GiveUpAfter {
		t.Fatalf("%d log lines for %d pipelines over 330 passes, want at most %d", lines, n, n*GiveUpAfter)
	}
	for i := range n {
		if p := b.job(fmt.Sprintf("p%d", i)); p.Status != job.JobFailed {
			t.Fatalf("p%d is %s after 11 minutes of failures, want Failed", i, p.Status)
		}
	}
	t.Logf("%d pipelines, 330 passes: %d log lines, %d bytes", n, lines, logs.Len())
}
