package pipelinejob_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobtest"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
)

// sweepThenPredict is Azure's pipeline_with_hyperparameter_sweep: a
// sweep step over a trial component, whose best trial's model the next
// step reads.
func sweepThenPredict() map[string]any {
	trial := jobtest.TrainComponent()
	trial["outputs"].(map[string]any)["test_data"] = map[string]any{"type": "uri_folder"}
	return map[string]any{
		"type": "pipeline", "settings": map[string]any{"default_compute": "azureml:cpu-cluster"},
		"jobs": map[string]any{
			"sweep_step": map[string]any{
				"type":               "sweep",
				"trial":              trial,
				"inputs":             map[string]any{"training_data": map[string]any{"type": "uri_folder", "path": "sha256:" + strings.Repeat("a", 64)}, "kind": "slow"},
				"outputs":            map[string]any{"model_output": nil, "test_data": nil},
				"sampling_algorithm": "random",
				"search_space": map[string]any{
					"lr":         map[string]any{"type": "uniform", "min_value": 0.01, "max_value": 0.1},
					"max_epochs": map[string]any{"type": "choice", "values": []any{5, 10}},
				},
				"objective":         map[string]any{"goal": "minimize", "primary_metric": "loss"},
				"limits":            map[string]any{"max_total_trials": 4, "max_concurrent_trials": 2, "timeout": 7200},
				"early_termination": map[string]any{"type": "bandit", "slack_factor": 0.1, "evaluation_interval": 1},
			},
			"predict_step": map[string]any{
				"command":     "python predict.py ${{inputs.model}} ${{inputs.test}} ${{outputs.out}}",
				"environment": "azureml:sklearn:1",
				"inputs": map[string]any{
					"model": "${{parent.jobs.sweep_step.outputs.model_output}}",
					"test":  "${{parent.jobs.sweep_step.outputs.test_data}}",
				},
				"outputs": map[string]any{"out": nil},
			},
		},
	}
}

// A sweep step is a sweep job over its trial component: the search space
// gives some inputs (${{search_space.x}} in the trial's command), the
// step binds the others, the component's outputs are the sweep's, and
// the next step reads them as any step's outputs.
func TestPipelineSweepStep(t *testing.T) {
	spec, err := decodePipeline(t, sweepThenPredict())
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	g, err := pipelinejob.NewPipelineGraph(spec)
	if err != nil {
		t.Fatal(err)
	}
	if d := g.Dependencies("predict_step"); len(d) != 1 || d[0] != "sweep_step" {
		t.Fatalf("predict depends on %v", d)
	}
	if _, err := g.Resolve("sweep_step", pipelinejob.PipelineRun{}); core.ErrorCode(err) != core.EINVALID {
		t.Errorf("a sweep step resolved as a command job: %v", err)
	}
	ss, err := g.ResolveSweep("sweep_step", pipelinejob.PipelineRun{})
	if err != nil {
		t.Fatal(err)
	}
	cmd := ss.Trial.Command
	for _, want := range []string{"--lr ${{search_space.lr}}", "--epochs ${{search_space.max_epochs}}", "--kind ${{inputs.kind}}", "--out ${{outputs.model_output}}"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("trial command %q lacks %q", cmd, want)
		}
	}
	if _, ok := ss.Inputs["lr"]; ok {
		t.Errorf("a hyperparameter is an input of the sweep: %v", core.SortedKeys(ss.Inputs))
	}
	if ss.Inputs["kind"].Value != "slow" || ss.Inputs["training_data"].Path == "" {
		t.Errorf("inputs %+v", ss.Inputs)
	}
	if ss.Outputs["model_output"] == nil || ss.Outputs["test_data"] == nil {
		t.Errorf("outputs %v", core.SortedKeys(ss.Outputs))
	}
	if ss.Compute != "cpu-cluster" || ss.Objective.Goal != job.GoalMinimize || ss.Limits.MaxTotalTrials != 4 || ss.EarlyTermination == nil {
		t.Errorf("sweep %+v", ss)
	}
	if ss.Trial.Code == "" || ss.Trial.Environment == nil {
		t.Errorf("trial %+v: want the component's code and environment", ss.Trial)
	}
	// Resolving fills in defaults on a copy: the pipeline's own sweep
	// settings are as written.
	if spec.Jobs["sweep_step"].Sweep.Limits.Timeout != 7200 || spec.Jobs["sweep_step"].Sweep.SamplingAlgorithm.Type != "random" {
		t.Errorf("the step's sweep changed: %+v", spec.Jobs["sweep_step"].Sweep)
	}
	js, err := g.Resolve("predict_step", pipelinejob.PipelineRun{Outputs: map[string]map[string]string{
		"sweep_step": {"model_output": "sha256:" + strings.Repeat("b", 64), "test_data": "sha256:" + strings.Repeat("c", 64)}}})
	if err != nil {
		t.Fatal(err)
	}
	if js.Inputs["model"].Path != "sha256:"+strings.Repeat("b", 64) {
		t.Errorf("predict reads %+v", js.Inputs["model"])
	}
}

// A sweep step's mistakes are refused naming the field.
func TestPipelineSweepStepRefusals(t *testing.T) {
	checkRefusals(t, sweepThenPredict, []refusal{
		{"no trial", "jobs.sweep_step.trial", "is required", func(d map[string]any) { jobtest.Set(d, "jobs.sweep_step.trial", nil) }},
		{"trial a number", "jobs.sweep_step.trial", "must be a command component", func(d map[string]any) { jobtest.Set(d, "jobs.sweep_step.trial", 7) }},
		{"no search space", "jobs.sweep_step.search_space", "is required", func(d map[string]any) { jobtest.Set(d, "jobs.sweep_step.search_space", nil) }},
		{"hyperparameter not an input", "jobs.sweep_step.search_space.momentum", "declares no input", func(d map[string]any) {
			jobtest.Set(d, "jobs.sweep_step.search_space.momentum", map[string]any{"type": "uniform", "min_value": 0, "max_value": 1})
		}},
		{"hyperparameter also bound", "jobs.sweep_step.search_space.lr", "also bound", func(d map[string]any) {
			jobtest.Set(d, "jobs.sweep_step.inputs.lr", 0.5)
		}},
		{"hyperparameter a folder", "jobs.sweep_step.search_space.training_data", "is uri_folder", func(d map[string]any) {
			jobtest.Set(d, "jobs.sweep_step.inputs.training_data", nil)
			jobtest.Set(d, "jobs.sweep_step.search_space.training_data", map[string]any{"type": "choice", "values": []any{"a"}})
		}},
		{"choice outside the input's enum", "jobs.sweep_step.search_space.kind.values[1]", "", func(d map[string]any) {
			jobtest.Set(d, "jobs.sweep_step.inputs.kind", nil)
			jobtest.Set(d, "jobs.sweep_step.search_space.kind", map[string]any{"type": "choice", "values": []any{"fast", "warp"}})
		}},
		{"choice of text for an integer", "jobs.sweep_step.search_space.max_epochs.values[0]", "", func(d map[string]any) {
			jobtest.Set(d, "jobs.sweep_step.search_space.max_epochs", map[string]any{"type": "choice", "values": []any{"ten"}})
		}},
		{"bad goal", "jobs.sweep_step.objective.goal", "", func(d map[string]any) { jobtest.Set(d, "jobs.sweep_step.objective.goal", "up") }},
		{"bad distribution", "jobs.sweep_step.search_space.lr", "", func(d map[string]any) {
			jobtest.Set(d, "jobs.sweep_step.search_space.lr", "fast")
		}},
		{"a command on a sweep", "jobs.sweep_step.command", "unknown key", func(d map[string]any) { jobtest.Set(d, "jobs.sweep_step.command", "true") }},
		{"unknown output of the trial", "jobs.predict_step.inputs.model", "no such output", func(d map[string]any) {
			jobtest.Set(d, "jobs.predict_step.inputs.model", "${{parent.jobs.sweep_step.outputs.nope}}")
		}},
		{"trial without required input", "jobs.sweep_step.inputs.training_data", "is required", func(d map[string]any) {
			jobtest.Set(d, "jobs.sweep_step.inputs.training_data", nil)
		}},
	})
}

// A sweep step inside a pipeline component is expanded as any step: its
// inputs bound through, the parent reading its best trial's outputs
// through the component's.
func TestPipelineSweepStepInComponent(t *testing.T) {
	inner := sweepThenPredict()["jobs"].(map[string]any)["sweep_step"].(map[string]any)
	jobtest.Set(inner, "inputs.kind", "${{parent.inputs.kind}}")
	jobtest.Set(inner, "outputs.model_output", "${{parent.outputs.model}}")
	doc := map[string]any{
		"type": "pipeline", "settings": map[string]any{"default_compute": "cpu-cluster"},
		"jobs": map[string]any{
			"tuned": map[string]any{"type": "pipeline", "inputs": map[string]any{"kind": "fast"}, "component": map[string]any{
				"type":    "pipeline",
				"inputs":  map[string]any{"kind": map[string]any{"type": "string"}},
				"outputs": map[string]any{"model": map[string]any{"type": "uri_folder"}},
				"jobs":    map[string]any{"sweep_step": inner},
			}},
			"use": map[string]any{"command": "ls ${{inputs.m}}", "environment": "azureml:sklearn:1",
				"inputs": map[string]any{"m": "${{parent.jobs.tuned.outputs.model}}"}},
		},
	}
	spec, err := decodePipeline(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	s := spec.Jobs["tuned-sweep_step"]
	if s == nil || s.Sweep == nil || s.Inputs["kind"].Value != "fast" {
		t.Fatalf("steps %v", core.SortedKeys(spec.Jobs))
	}
	if b := spec.Jobs["use"].Inputs["m"].Bind; b != "${{parent.jobs.tuned-sweep_step.outputs.model_output}}" {
		t.Errorf("use reads %q", b)
	}
}
