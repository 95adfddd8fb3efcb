package pipelines_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/control/pipelines"
	"github.com/shoal-ml/shoal/control/sweeps"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/internal/archive"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/filestore"
)

// sweepPipeline is a pipeline whose sweep step's model the next step
// reads, on real services over a store with a cluster.
const sweepPipeline = `{"type": "pipeline", "name": "p", "settings": {"default_compute": "azureml:cpu"},
	"jobs": {
		"tune": {"type": "sweep",
			"trial": {"type": "command", "inputs": {"lr": {"type": "number"}}, "outputs": {"model": {"type": "uri_folder"}},
				"command": "python t.py --lr ${{inputs.lr}} --out ${{outputs.model}}"},
			"search_space": {"lr": {"type": "choice", "values": [0.1, 0.2]}},
			"sampling_algorithm": "grid",
			"objective": {"primary_metric": "acc", "goal": "maximize"},
			"limits": {"max_total_trials": 2}},
		"use": {"command": "cat ${{inputs.m}}/which", "inputs": {"m": "${{parent.jobs.tune.outputs.model}}"}}}}`

type sweepWorld struct {
	db    store.Store
	files *filestore.Store
	svc   *service.Services
	pl    *pipelines.Loop
	sw    *sweeps.Loop
}

func newSweepWorld(t *testing.T) (*sweepWorld, func()) {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	if err := db.Update(ctx, func(tx store.Tx) error {
		c, four := teststore.Cluster(tx, "cpu"), 4
		c.MaxInstances = &four
		return tx.InsertCompute(c)
	}); err != nil {
		t.Fatal(err)
	}
	cat, err := compute.NewCatalog([]*compute.Location{{Name: "local", Provider: "fake", Quota: compute.DefaultQuotaLimits()}}, compute.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: db, Catalog: cat, Files: files})
	w := &sweepWorld{db: db, files: files, svc: svc, pl: pipelines.New(svc), sw: sweeps.New(svc)}
	pass := func() {
		t.Helper()
		if err := w.sw.RunOnce(ctx, clock.Now()); err != nil {
			t.Fatal(err)
		}
		if err := w.pl.RunOnce(ctx, clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return w, pass
}

func (w *sweepWorld) get(t *testing.T, name string) *job.Job {
	t.Helper()
	var j *job.Job
	if err := w.db.View(context.Background(), func(tx store.Tx) (err error) { j, err = tx.GetJob("ws", name); return err }); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return j
}

// finish completes a trial, its model folder saying which trial wrote
// it, having logged acc (none when nil).
func (w *sweepWorld) finish(t *testing.T, name string, acc *float64) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "model"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model", "which"), []byte(name), 0o600); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := archive.Pack(&b, dir, archive.PackOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.files.PutOutputs("ws", name, 1, 0, &b, 1<<20); err != nil {
		t.Fatal(err)
	}
	err := w.db.Update(context.Background(), func(tx store.Tx) error {
		j, err := tx.GetJob("ws", name)
		if err != nil {
			return err
		}
		j.Status, j.AttemptCount = job.JobCompleted, 1
		j.Version++
		if err := tx.UpdateJob(j); err != nil {
			return err
		}
		if acc == nil {
			return nil
		}
		return tx.AppendMetrics("ws", name, []job.MetricPoint{{Key: "acc", Value: *acc, Timestamp: 1}})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func submitSweepPipeline(t *testing.T, w *sweepWorld) {
	t.Helper()
	spec, err := pipelinejob.DecodePipelineSpec([]byte(sweepPipeline))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.svc.SubmitPipeline(context.Background(), "ws", spec); err != nil {
		t.Fatal(err)
	}
}

// A sweep step runs as a sweep job, a child of the pipeline of the same
// submitter, whose trials the sweep loop runs; once it completes, its
// best trial's output (not another trial's) is what the next step reads.
func TestSweepStepBestTrialFeedsNextStep(t *testing.T) {
	w, pass := newSweepWorld(t)
	submitSweepPipeline(t, w)
	pass()
	tune := w.get(t, "p-tune")
	if tune.Sweep == nil || tune.ParentJobName != "p" || tune.CreatedBy != w.get(t, "p").CreatedBy {
		t.Fatalf("p-tune: sweep %v, parent %q: want a sweep child of p", tune.Sweep != nil, tune.ParentJobName)
	}
	if !strings.Contains(tune.Sweep.Trial.Command, "--lr ${{search_space.lr}}") {
		t.Errorf("trial command %q", tune.Sweep.Trial.Command)
	}
	pass()
	low, high := 0.5, 0.9
	w.finish(t, job.SweepChildName("p-tune", 0), &low)
	w.finish(t, job.SweepChildName("p-tune", 1), &high)
	pass()
	pass()
	if tune = w.get(t, "p-tune"); tune.Status != job.JobCompleted || tune.BestChildRunID != job.SweepChildName("p-tune", 1) {
		t.Fatalf("p-tune %s, best %q", tune.Status, tune.BestChildRunID)
	}
	use := w.get(t, "p-use")
	in := use.Inputs["m"]
	if in == nil || !job.ValidateArtifactRef(in.Path) {
		t.Fatalf("p-use's input %+v, want the sweep's output artifact", in)
	}
	r, err := w.files.OpenArtifact("ws", in.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	gz, err := gzip.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		if strings.HasSuffix(h.Name, "which") {
			_, _ = io.Copy(&got, tr)
		}
	}
	if got.String() != job.SweepChildName("p-tune", 1) {
		t.Errorf("p-use reads %q, want the best trial's model", got.String())
	}
}

// A sweep step with no best trial (no trial logged the primary metric)
// has no outputs: the step fails saying so, and the pipeline with it.
func TestSweepStepWithoutBestTrialFails(t *testing.T) {
	w, pass := newSweepWorld(t)
	submitSweepPipeline(t, w)
	pass()
	pass()
	w.finish(t, job.SweepChildName("p-tune", 0), nil)
	w.finish(t, job.SweepChildName("p-tune", 1), nil)
	for range 3 {
		pass()
	}
	p := w.get(t, "p")
	if p.Status != job.JobFailed {
		t.Fatalf("pipeline %s (%s), want Failed", p.Status, p.StatusReason)
	}
	for _, s := range p.Steps {
		if s.Name == "tune" && !strings.Contains(s.Reason, "no best trial") {
			t.Errorf("tune: %+v, want its reason to say it has no best trial", s)
		}
	}
}
