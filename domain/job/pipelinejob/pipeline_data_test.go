package pipelinejob_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/domain/job/jobtest"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
)

// Remote inputs, model and table types, and outputs kept where the YAML
// says, through a pipeline's inputs, its steps and the jobs they become.
func TestPipelineRemoteInputsAndOutputPaths(t *testing.T) {
	d := threeSteps()
	d = jobtest.Set(d, "inputs.raw", map[string]any{"type": "uri_folder", "path": "azureml:raw-data@latest", "mode": "download"})
	d = jobtest.Set(d, "outputs.final_model", map[string]any{"type": "uri_folder", "path": "azureml://datastores/workspaceblobstore/paths/${{name}}/${{output_name}}/", "name": "final", "version": "3"})
	d = jobtest.Set(d, "jobs.score.inputs.model", map[string]any{"type": "mlflow_model", "path": "azureml://models/bert/versions/1"})
	d = jobtest.Set(d, "jobs.score.inputs.data", map[string]any{"type": "mltable", "path": "https://h.example/tables/iris/", "mode": "eval_download"})
	d = jobtest.Set(d, "jobs.score.outputs.scores", map[string]any{"type": "uri_file", "path": "azureml://datastores/blob/paths/scores/${{name}}.csv", "name": "scores"})
	spec, err := decodePipeline(t, d)
	if err != nil {
		t.Fatal(err)
	}
	spec.Name = "pipe_1"
	g, err := pipelinejob.NewPipelineGraph(spec)
	if err != nil {
		t.Fatal(err)
	}
	score, err := g.Resolve("score", pipelinejob.PipelineRun{Outputs: map[string]map[string]string{"prep": {"clean": "sha256:" + strings.Repeat("b", 64)}, "train": {"model_output": "sha256:" + strings.Repeat("c", 64)}}})
	if err != nil {
		t.Fatal(err)
	}
	if in := score.Inputs["model"]; in.Type != "mlflow_model" || in.Path != "azureml://models/bert/versions/1" {
		t.Errorf("score's model input = %+v", in)
	}
	if in := score.Inputs["data"]; in.Type != "mltable" || in.Mode != "eval_download" {
		t.Errorf("score's data input = %+v", in)
	}
	if o := score.Outputs["scores"]; o.Type != "uri_file" || o.Path != "azureml://datastores/blob/paths/scores/${{name}}.csv" || o.Name != "scores" {
		t.Errorf("score's output = %+v (its own path, expanded with the step job's name when it runs)", o)
	}
	prep, err := g.Resolve("prep", pipelinejob.PipelineRun{})
	if err != nil {
		t.Fatal(err)
	}
	if in := prep.Inputs["raw"]; in.Path != "azureml:raw-data@latest" || in.Mode != "download" {
		t.Errorf("prep's raw input (bound to the pipeline's) = %+v", in)
	}
	train, err := g.Resolve("train", pipelinejob.PipelineRun{Outputs: map[string]map[string]string{"prep": {"clean": "sha256:" + strings.Repeat("b", 64)}}})
	if err != nil {
		t.Fatal(err)
	}
	if o := train.Outputs["model_output"]; o.Path != "azureml://datastores/workspaceblobstore/paths/pipe_1/final_model/" {
		t.Errorf("train's output bound to the pipeline's = %+v, want the pipeline output's path with the pipeline's names", o)
	}
	// The pipeline output's name and version register what the step
	// writes there, when the step completes.
	if o := train.Outputs["model_output"]; o.Name != "final" || o.Version != "3" {
		t.Errorf("train's output bound to the pipeline's = %+v, want it registered as final:3", o)
	}
}

// Azure's examples: an inline step whose output binds a uri_file
// pipeline output is a uri_file output; a step gives a uri_file to a
// component's uri_folder input.
func TestPipelineTypesAsAzureTakesThem(t *testing.T) {
	d := threeSteps()
	d = jobtest.Set(d, "outputs.scores_file", map[string]any{"type": "uri_file", "path": "azureml://datastores/workspaceblobstore/paths/${{name}}/scores.csv"})
	d = jobtest.Set(d, "jobs.score.outputs.scores", "${{parent.outputs.scores_file}}")
	d = jobtest.Set(d, "jobs.train.inputs.training_data", map[string]any{"type": "uri_file", "path": "https://h.example/iris.csv"})
	spec, err := decodePipeline(t, d)
	if err != nil {
		t.Fatal(err)
	}
	if got := spec.Jobs["score"].Component.Outputs["scores"].Type; got != "uri_file" {
		t.Errorf("inline step output type = %s, want uri_file", got)
	}
	if got := spec.Jobs["train"].Inputs["training_data"].Type; got != "uri_file" {
		t.Errorf("step input type = %s, want the step's uri_file", got)
	}
}

func TestPipelineDataRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, field string
		frags       []string
		edit        func(map[string]any) map[string]any
	}{
		{"eval_mount on a step's folder", "jobs.score.inputs.model.mode", []string{"mltable inputs only"}, func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.score.inputs.model.mode", "eval_mount")
		}},
		{"dot-dot in a step path", "jobs.train.inputs.training_data.path", []string{"'..' segments"}, func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.inputs.training_data", map[string]any{"path": "azureml://datastores/d/paths/../x"})
		}},
		{"dot-dot in a pipeline input", "inputs.raw.path", []string{"'..' segments"}, func(d map[string]any) map[string]any {
			return jobtest.Set(d, "inputs.raw.path", "s3://bucket/../other")
		}},
		{"direct step output", "jobs.score.outputs.scores.mode", []string{"direct is an input mode"}, func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.score.outputs.scores.mode", "direct")
		}},
		{"step output URL", "jobs.score.outputs.scores.path", []string{"is a URL"}, func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.score.outputs.scores.path", "https://h/out")
		}},
		{"step output version alone", "jobs.score.outputs.scores.version", []string{"needs name"}, func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.score.outputs.scores.version", 2)
		}},
		{"pipeline output bad name", "outputs.final_model.name", []string{"letters, digits"}, func(d map[string]any) map[string]any {
			return jobtest.Set(d, "outputs.final_model.name", "bad name")
		}},
		{"pipeline output literal type", "outputs.final_model.type", []string{"not supported"}, func(d map[string]any) map[string]any {
			return jobtest.Set(d, "outputs.final_model.type", "integer")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodePipeline(t, tc.edit(threeSteps()))
			coretest.WantFieldError(t, err, tc.field, tc.frags...)
		})
	}
}
