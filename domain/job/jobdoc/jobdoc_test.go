package jobdoc_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobdoc"
	"github.com/shoal-ml/shoal/domain/job/jobtest"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
)

func decodePipeline(t *testing.T, doc map[string]any) *job.PipelineSpec {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := pipelinejob.DecodePipelineSpec(b)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return spec
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pipelines are documents of every kind of step a stored pipeline keeps.
func pipelines() map[string]map[string]any {
	trial := jobtest.TrainComponent()
	return map[string]map[string]any{
		"inline steps and bindings": {
			"type": "pipeline", "display_name": "nightly", "experiment_name": "exp", "tags": map[string]any{"a": "b"},
			"compute": "azureml:cpu", "inputs": map[string]any{"n": 3, "data": map[string]any{"type": "uri_folder", "path": "sha256:" + strings.Repeat("b", 64)}},
			"outputs":  map[string]any{"final": map[string]any{"type": "uri_folder"}},
			"settings": map[string]any{"continue_on_step_failure": true, "default_datastore": "x", "some_unknown": map[string]any{"k": 1}},
			"jobs": map[string]any{
				"a": map[string]any{"command": "echo ${{inputs.n}} > ${{outputs.o}}/x", "environment": "azureml:python:1",
					"code": "sha256:" + strings.Repeat("c", 64), "environment_variables": map[string]any{"E": "1"},
					"inputs":  map[string]any{"n": "${{parent.inputs.n}}", "d": map[string]any{"type": "uri_folder", "path": "${{parent.inputs.data}}", "mode": "download"}, "lit": "hello"},
					"outputs": map[string]any{"o": map[string]any{"type": "uri_folder", "mode": "rw_mount"}}},
				"b": map[string]any{"command": "cat ${{inputs.i}}/x", "environment": map[string]any{"image": "python:3.12"},
					"inputs": map[string]any{"i": "${{parent.jobs.a.outputs.o}}"}, "outputs": map[string]any{"r": "${{parent.outputs.final}}"},
					"resources": map[string]any{"instance_count": 1}, "limits": map[string]any{"timeout": 60}},
			},
		},
		"component mapping step": {
			"type": "pipeline", "settings": map[string]any{"default_compute": "azureml:cpu"},
			"jobs": map[string]any{"train": map[string]any{"type": "command", "component": trial,
				"inputs": map[string]any{"training_data": map[string]any{"type": "uri_folder", "path": "sha256:" + strings.Repeat("a", 64)}, "max_epochs": 3, "lr": 0.1, "kind": "k"}}},
		},
		"component reference step": {
			"type": "pipeline", "compute": "azureml:cpu",
			"jobs": map[string]any{"train": map[string]any{"component": "azureml:train:2", "inputs": map[string]any{"lr": 0.5}}},
		},
		"sweep step": {
			"type": "pipeline", "settings": map[string]any{"default_compute": "azureml:cpu"},
			"jobs": map[string]any{"sweep_step": map[string]any{
				"type": "sweep", "trial": jobtest.TrainComponent(),
				"inputs":             map[string]any{"training_data": map[string]any{"type": "uri_folder", "path": "sha256:" + strings.Repeat("a", 64)}, "kind": "slow"},
				"outputs":            map[string]any{"model_output": nil},
				"sampling_algorithm": map[string]any{"type": "bayesian"},
				"search_space": map[string]any{"lr": map[string]any{"type": "loguniform", "min_value": -6, "max_value": -1},
					"max_epochs": map[string]any{"type": "randint", "upper": 20}},
				"objective": map[string]any{"goal": "maximize", "primary_metric": "acc"}, "limits": map[string]any{"max_total_trials": 8},
				"early_termination": map[string]any{"type": "median_stopping", "evaluation_interval": 2},
			}},
		},
		"inline parallel step": {
			"type": "pipeline", "compute": "azureml:cpu",
			"jobs": map[string]any{"score": map[string]any{"type": "parallel",
				"inputs":     map[string]any{"rows": map[string]any{"type": "uri_folder", "path": "sha256:" + strings.Repeat("f", 64)}},
				"input_data": "${{inputs.rows}}", "mini_batch_size": "3",
				"task": map[string]any{"type": "run_function", "code": "sha256:" + strings.Repeat("c", 64), "entry_script": "score.py",
					"environment": "azureml:python:1", "program_arguments": "--k 1", "append_row_to": "${{outputs.out}}"},
				"outputs": map[string]any{"out": map[string]any{"type": "uri_file"}}, "retry_settings": map[string]any{"max_retries": 2, "timeout": 30}, "error_threshold": 3}},
		},
		"nested pipeline": {
			"type": "pipeline", "compute": "azureml:cpu",
			"jobs": map[string]any{"outer": map[string]any{"type": "pipeline", "component": map[string]any{"type": "pipeline",
				"jobs": map[string]any{"x": map[string]any{"command": "echo hi > ${{outputs.o}}/f", "environment": "azureml:python:1", "outputs": map[string]any{"o": nil}},
					"y": map[string]any{"command": "cat ${{inputs.i}}/f", "environment": "azureml:python:1", "inputs": map[string]any{"i": "${{parent.jobs.x.outputs.o}}"}}}}}},
		},
	}
}

// A stored pipeline (steps decoded, nested ones expanded, a component
// reference resolved) written back decodes to the same pipeline: a
// schedule's create_job: azureml:<pipeline> submits the job it names.
func TestPipelineRoundTrip(t *testing.T) {
	for name, doc := range pipelines() {
		t.Run(name, func(t *testing.T) {
			spec := decodePipeline(t, doc)
			spec.Name = "source"
			// Where an expanded step was written is the only thing a
			// nested pipeline's steps lose: they are written expanded.
			for _, s := range spec.Jobs {
				s.From = ""
			}
			want := asJSON(t, spec)
			// As stored: a referenced component resolved at submit.
			for _, s := range spec.Jobs {
				if s.ComponentRef != "" {
					s.Component = &job.Component{Name: "train", Version: "2", Type: "command", Command: "python train.py"}
				}
			}
			out, err := jobdoc.Of(&job.Job{JobSpec: job.JobSpec{Name: "source"}, Pipeline: spec})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(out), `"name":"source"`) {
				t.Errorf("the document keeps the job's name: %s", out)
			}
			got, err := pipelinejob.DecodePipelineSpec(out)
			if err != nil {
				t.Fatalf("the written document does not decode: %v\n%s", err, out)
			}
			got.Name = "source"
			if g := asJSON(t, got); g != want {
				t.Errorf("round trip differs:\n got %s\nwant %s\ndoc %s", g, want, out)
			}
		})
	}
}

// A stored sweep job written back decodes to the same sweep.
func TestSweepRoundTrip(t *testing.T) {
	doc := map[string]any{"type": "sweep", "compute": "azureml:cpu",
		"trial":              map[string]any{"command": "python train.py --lr ${{search_space.lr}} --e ${{search_space.max_epochs}} --k ${{inputs.kind}}", "environment": "azureml:python:1", "code": "sha256:" + strings.Repeat("c", 64)},
		"inputs":             map[string]any{"kind": "k"},
		"sampling_algorithm": "random", "search_space": map[string]any{"lr": map[string]any{"type": "uniform", "min_value": 0.01, "max_value": 0.1}, "max_epochs": map[string]any{"type": "choice", "values": []any{5, 10}}},
		"objective": map[string]any{"goal": "minimize", "primary_metric": "loss"}, "limits": map[string]any{"max_total_trials": 2}}
	b, _ := json.Marshal(doc)
	spec, err := sweepjob.DecodeSweepSpec(b)
	if err != nil {
		t.Fatal(err)
	}
	want := asJSON(t, spec)
	out, err := jobdoc.Of(&job.Job{Sweep: spec})
	if err != nil {
		t.Fatal(err)
	}
	got, err := sweepjob.DecodeSweepSpec(out)
	if err != nil {
		t.Fatalf("the written document does not decode: %v\n%s", err, out)
	}
	if g := asJSON(t, got); g != want {
		t.Errorf("round trip differs:\n got %s\nwant %s", g, want)
	}
}
