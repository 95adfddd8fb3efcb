package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/job"
)

// A pipeline component file's steps name component files relative to
// it; a sweep step's trial is a component file: the CLI reads them all,
// uploads their code relative to their own files, and the server takes
// what comes out.
func TestInlineNestedPipelineAndTrial(t *testing.T) {
	srv, uploaded := artifactServer(t)
	dir := t.TempDir()
	write := fileWriter(t, dir)
	write("sub/train/train.py", "print('train')\n")
	write("sub/train.yml", `type: command
name: train
inputs:
  data: {type: uri_folder}
  lr: {type: number, default: 0.1}
outputs:
  model: {type: uri_folder}
code: ./train
environment: azureml:sklearn:1
command: python train.py --data ${{inputs.data}} --lr ${{inputs.lr}} --out ${{outputs.model}}
`)
	write("sub/pipe.yml", `type: pipeline
inputs:
  data: {type: uri_folder}
outputs:
  model: {type: uri_folder}
jobs:
  fit:
    type: command
    component: ./train.yml
    inputs:
      data: ${{parent.inputs.data}}
    outputs:
      model: ${{parent.outputs.model}}
`)
	write("data/x.csv", "a,b\n")
	write("pipeline.yml", `type: pipeline
settings:
  default_compute: cpu-cluster
inputs:
  raw: {type: uri_folder, path: ./data}
jobs:
  inner:
    type: pipeline
    component: ./sub/pipe.yml
    inputs:
      data: ${{parent.inputs.raw}}
  tune:
    type: sweep
    trial: ./sub/train.yml
    inputs:
      data: ${{parent.jobs.inner.outputs.model}}
    sampling_algorithm: random
    search_space:
      lr: {type: uniform, min_value: 0.01, max_value: 0.1}
    objective: {goal: maximize, primary_metric: acc}
    limits: {max_total_trials: 2}
`)
	_, spec := inlinedPipeline(t, srv.URL, dir)
	if n := uploaded(); n != 3 {
		t.Errorf("%d uploads, want 3 (train's code twice, the pipeline's input)", n)
	}
	fit := spec.Jobs["inner-fit"]
	if fit == nil || fit.Component == nil || !job.ValidateArtifactRef(fit.Component.Code) {
		t.Fatalf("inner-fit = %+v; want the nested file's component, its code uploaded", fit)
	}
	if tune := spec.Jobs["tune"]; tune == nil || tune.Component == nil || !job.ValidateArtifactRef(tune.Component.Code) {
		t.Fatalf("tune = %+v; want its trial file's component, its code uploaded", tune)
	}
}

// A pipeline component file that includes itself (directly or through
// another) is named with the chain, not read for ever.
func TestInlinePipelineComponentCycle(t *testing.T) {
	srv, _ := artifactServer(t)
	dir := t.TempDir()
	write := fileWriter(t, dir)
	write("a.yml", "type: pipeline\njobs:\n  b:\n    type: pipeline\n    component: ./b.yml\n")
	write("b.yml", "type: pipeline\njobs:\n  a:\n    type: pipeline\n    component: ./a.yml\n")
	write("pipeline.yml", "type: pipeline\njobs:\n  top:\n    type: pipeline\n    component: ./a.yml\n")
	doc, err := cmdutil.ReadYAMLDocument(filepath.Join(dir, "pipeline.yml"))
	if err != nil {
		t.Fatal(err)
	}
	err = inlinePipelineComponents(t.Context(), client.NewClient(srv.URL, ""), "ws", dir, doc)
	if err == nil || !strings.Contains(err.Error(), "includes itself (a.yml → b.yml → a.yml)") ||
		!strings.HasPrefix(err.Error(), "jobs.top.component.jobs.b.component.jobs.a.component") {
		t.Fatalf("got %v, want the cycle named at its field", err)
	}
}
