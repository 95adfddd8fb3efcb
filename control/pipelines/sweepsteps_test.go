package pipelines

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
	"github.com/shoal-ml/shoal/internal/archive"
	"github.com/shoal-ml/shoal/store"
)

// sweepPipeline is a pipeline whose sweep step's model the next step
// reads.
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

// sweepRun submits sweepPipeline and runs the loop until the sweep step
// is submitted; then two trials of its sweep run and end, trial i's model
// folder saying which trial wrote it, and the sweep ends with best as its
// best trial (control/sweeps decides that; e2e
// TestPipelineSweepAndComponentSteps runs both loops). It returns the
// sweep step's job.
func sweepRun(b *bench, l *Loop, best string) *job.Job {
	b.t.Helper()
	spec, err := pipelinejob.DecodePipelineSpec([]byte(sweepPipeline))
	if err != nil {
		b.t.Fatal(err)
	}
	if _, _, err := b.svc.SubmitPipeline(b.ctx, "ws", spec); err != nil {
		b.t.Fatal(err)
	}
	if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
		b.t.Fatal(err)
	}
	tune := b.job("p-tune")
	for i, lr := range []string{"0.1", "0.2"} {
		js, err := sweepjob.TrialJobSpec(tune.Sweep, map[string]string{"lr": lr})
		if err != nil {
			b.t.Fatal(err)
		}
		js.Name = job.SweepChildName("p-tune", i)
		if _, err := b.svc.SubmitChildJob(b.ctx, tune, js); err != nil {
			b.t.Fatal(err)
		}
		b.model(js.Name)
		b.end(js.Name, job.JobCompleted)
	}
	if err := b.db.Update(b.ctx, func(tx store.Tx) error {
		j, err := tx.GetJob("ws", "p-tune")
		if err != nil {
			return err
		}
		j.Status, j.BestChildRunID = job.JobCompleted, best
		j.Version++
		return tx.UpdateJob(j)
	}); err != nil {
		b.t.Fatal(err)
	}
	for range 2 {
		if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
			b.t.Fatal(err)
		}
	}
	return tune
}

// model stores a trial's outputs: a model folder whose file names it.
func (b *bench) model(name string) {
	b.t.Helper()
	dir := b.t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "model"), 0o700); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model", "which"), []byte(name), 0o600); err != nil {
		b.t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := archive.Pack(&buf, dir, archive.PackOptions{}); err != nil {
		b.t.Fatal(err)
	}
	if err := b.files.PutOutputs("ws", name, 1, 0, &buf, 1<<20); err != nil {
		b.t.Fatal(err)
	}
}

// A sweep step runs as a sweep job, a child of the pipeline of the same
// submitter, its trial the component with ${{search_space.lr}}; once it
// completes, its best trial's output (not another trial's) is what the
// next step reads.
func TestSweepStepBestTrialFeedsNextStep(t *testing.T) {
	b := newBench(t)
	l := New(b.svc)
	best := job.SweepChildName("p-tune", 1)
	tune := sweepRun(b, l, best)
	if tune.Sweep == nil || tune.ParentJobName != "p" || tune.CreatedBy != b.job("p").CreatedBy {
		t.Fatalf("p-tune: sweep %v, parent %q: want a sweep child of p", tune.Sweep != nil, tune.ParentJobName)
	}
	if !strings.Contains(tune.Sweep.Trial.Command, "--lr ${{search_space.lr}}") {
		t.Errorf("trial command %q", tune.Sweep.Trial.Command)
	}
	in := b.job("p-use").Inputs["m"]
	if in == nil || !job.ValidateArtifactRef(in.Path) {
		t.Fatalf("p-use's input %+v, want the sweep's output artifact", in)
	}
	r, err := b.files.OpenArtifact("ws", in.Path)
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
	if got.String() != best {
		t.Errorf("p-use reads %q, want the best trial's model", got.String())
	}
}

// A sweep step with no best trial (no trial logged the primary metric)
// has no outputs: the step fails saying so, and the pipeline with it.
func TestSweepStepWithoutBestTrialFails(t *testing.T) {
	b := newBench(t)
	l := New(b.svc)
	sweepRun(b, l, "")
	p := b.job("p")
	if p.Status != job.JobFailed {
		t.Fatalf("pipeline %s (%s), want Failed", p.Status, p.StatusReason)
	}
	if s := stepOf(p, "tune"); s == nil || !strings.Contains(s.Reason, "no best trial") {
		t.Errorf("tune: %+v, want its reason to say it has no best trial", s)
	}
	if s := stepOf(p, "use"); s == nil || s.Job != "" {
		t.Errorf("use: %+v, want never started", s)
	}
}

// Attacks at submission: a job of the sweep step's name that is not the
// pipeline's child (made first by someone to be read as the step) is not
// taken for the step, which fails saying so; a sweep step whose trials'
// names would be too long is refused at submit, naming the step.
func TestSweepStepAttacks(t *testing.T) {
	b := newBench(t)
	spec, err := sweepjob.DecodeSweepSpec([]byte(`{"type": "sweep", "name": "p-tune", "compute": "azureml:cpu",
		"trial": {"command": "echo ${{search_space.lr}}"}, "search_space": {"lr": {"type": "choice", "values": [1]}},
		"sampling_algorithm": "grid", "objective": {"primary_metric": "acc", "goal": "maximize"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.svc.SubmitSweep(b.ctx, "ws", spec); err != nil {
		t.Fatal(err)
	}
	p, err := pipelinejob.DecodePipelineSpec([]byte(sweepPipeline))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.svc.SubmitPipeline(b.ctx, "ws", p); err != nil {
		t.Fatal(err)
	}
	if err := New(b.svc).RunOnce(b.ctx, b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if s := stepOf(b.job("p"), "tune"); s == nil || s.Status != job.JobFailed || !strings.Contains(s.Reason, "not a child of p") {
		t.Errorf("tune: %+v, want failed: the job of its name is not the pipeline's", s)
	}

	long, err := pipelinejob.DecodePipelineSpec([]byte(strings.Replace(sweepPipeline, `"name": "p"`, `"name": "`+strings.Repeat("p", 249)+`"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.svc.SubmitPipeline(b.ctx, "ws", long); err == nil || !strings.Contains(err.Error(), "jobs.tune") || !strings.Contains(err.Error(), "-trial-") {
		t.Errorf("a sweep step whose trials' names are too long: %v", err)
	}
}
