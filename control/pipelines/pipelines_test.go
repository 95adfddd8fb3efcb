package pipelines

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/filestore"
)

// The loop over real services on a store: the first pass submits the
// steps with no inputs to wait for, a step waits for the one it reads
// from and says so, a step whose compute does not exist fails at
// submission as a step would, and without continue_on_step_failure the
// pipeline then cancels what runs and ends Failed, the step that never
// ran saying why. Passes run again submit nothing twice.
func TestRunOnceSubmitsWaitsAndStops(t *testing.T) {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	if err := db.Update(ctx, func(tx store.Tx) error {
		c := teststore.Cluster(tx, "cpu")
		two := 2
		c.MaxInstances = &two
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
	svc := service.New(service.Config{Store: db, Catalog: cat, Files: files})
	spec, err := pipelinejob.DecodePipelineSpec([]byte(`{"type": "pipeline", "name": "p", "settings": {"default_compute": "azureml:cpu"},
		"jobs": {
			"a": {"command": "echo a > ${{outputs.o}}/f", "outputs": {"o": {"type": "uri_folder"}}},
			"b": {"command": "ls ${{inputs.i}}", "inputs": {"i": "${{parent.jobs.a.outputs.o}}"}},
			"gone": {"command": "echo x", "compute": "azureml:nowhere"},
			"c": {"command": "echo c"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.SubmitPipeline(ctx, "ws", spec); err != nil {
		t.Fatal(err)
	}
	l := New(svc)
	get := func() *job.Job {
		var p *job.Job
		if err := db.View(ctx, func(tx store.Tx) (err error) { p, err = tx.GetJob("ws", "p"); return err }); err != nil {
			t.Fatal(err)
		}
		return p
	}
	step := func(p *job.Job, name string) *job.PipelineStepStatus {
		for _, s := range p.Steps {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("no step %s", name)
		return nil
	}
	if err := l.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	p := get()
	if s := step(p, "a"); s.Job != "p-a" || s.Status != job.JobQueued {
		t.Errorf("a: %+v, want submitted and queued", s)
	}
	if s := step(p, "c"); s.Job != "p-c" {
		t.Errorf("c: %+v, want submitted", s)
	}
	if s := step(p, "b"); s.Job != "" || !strings.Contains(s.Reason, "waits for a") {
		t.Errorf("b: %+v, want waiting for a", s)
	}
	if s := step(p, "gone"); s.Job != "" || s.Status != job.JobFailed || !strings.Contains(s.Reason, "could not be submitted") || !strings.Contains(s.Reason, "nowhere") {
		t.Errorf("gone: %+v, want failed at submission naming its compute", s)
	}
	// A step failed and continue_on_step_failure is false: the next
	// passes cancel a and c (queued, they end at once) and end the
	// pipeline.
	for range 2 {
		if err := l.RunOnce(ctx, clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"p-a", "p-c"} {
		var j *job.Job
		_ = db.View(ctx, func(tx store.Tx) (err error) { j, err = tx.GetJob("ws", name); return err })
		if j.Status != job.JobCanceled {
			t.Errorf("%s is %s after a step failed, want Canceled", name, j.Status)
		}
	}
	p = get()
	if p.Status != job.JobFailed || p.EndTime == nil {
		t.Fatalf("pipeline: %s (%s), want Failed", p.Status, p.StatusReason)
	}
	// Every end is in the jobs' logs: the pipeline's failure, its
	// queued steps' cancel.
	for name, kind := range map[string]string{"p": core.EventJobFailed, "p-a": core.EventJobCanceled, "p-c": core.EventJobCanceled} {
		evs, err := svc.ListJobEvents(ctx, "ws", name)
		if err != nil {
			t.Fatal(err)
		}
		wantOneEnd(t, name, evs, kind)
	}
	if s := step(p, "b"); s.Job != "" || s.Status != job.JobNotStarted || !strings.Contains(s.Reason, "will not run") {
		t.Errorf("b: %+v, want never started, saying why", s)
	}
	var n int
	_ = db.View(ctx, func(tx store.Tx) error {
		js, err := tx.ListJobs(job.JobFilter{Workspace: "ws"})
		n = len(js)
		return err
	})
	if n != 3 { // p, p-a, p-c
		t.Errorf("%d jobs in the workspace, want the pipeline and its two submitted steps", n)
	}
}
