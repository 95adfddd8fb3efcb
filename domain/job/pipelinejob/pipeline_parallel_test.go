package pipelinejob_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobtest"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
)

var (
	codeID  = "sha256:" + strings.Repeat("c", 64)
	tableID = "sha256:" + strings.Repeat("d", 64)
	modelID = "sha256:" + strings.Repeat("e", 64)
)

// irisParallel is Azure's 2a_iris_batch_prediction as the CLI sends it
// (local paths uploaded), with a step that reads the parallel step's
// rows after it.
func irisParallel() map[string]any {
	return map[string]any{
		"type": "pipeline", "settings": map[string]any{"default_compute": "azureml:cpu-cluster"},
		"jobs": map[string]any{
			"batch_prediction": map[string]any{
				"type": "parallel", "compute": "azureml:cpu-cluster",
				"inputs": map[string]any{
					"input_data":  map[string]any{"type": "mltable", "path": tableID, "mode": "direct"},
					"score_model": map[string]any{"type": "uri_folder", "path": modelID, "mode": "download"},
					"threshold":   "0.5",
				},
				"outputs": map[string]any{"job_output_file": map[string]any{"type": "uri_file", "mode": "rw_mount",
					"path": "azureml://datastores/${{default_datastore}}/paths/${{name}}/aggregated_returns.csv"}},
				"input_data":                   "${{inputs.input_data}}",
				"mini_batch_size":              "10kb",
				"resources":                    map[string]any{"instance_count": 2},
				"max_concurrency_per_instance": 2,
				"logging_level":                "debug",
				"error_threshold":              5,
				"mini_batch_error_threshold":   5,
				"retry_settings":               map[string]any{"max_retries": 2, "timeout": 60},
				"environment_variables":        map[string]any{"AZUREML_PARALLEL_EXAMPLE": "2a_yaml"},
				"task": map[string]any{
					"type": "run_function", "code": codeID, "entry_script": "iris_prediction.py",
					"environment":       map[string]any{"image": "mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04"},
					"program_arguments": "--model ${{inputs.score_model}} --threshold ${{inputs.threshold}}",
					"append_row_to":     "${{outputs.job_output_file}}",
				},
			},
			"view": map[string]any{
				"command": "cat ${{inputs.rows}}", "environment": "azureml:sklearn:1",
				"inputs": map[string]any{"rows": "${{parent.jobs.batch_prediction.outputs.job_output_file}}"},
			},
		},
	}
}

// A parallel step resolves to a command job whose command is Shoal's
// driver with the program arguments, whose code and environment are the
// task's, and whose Parallel carries the settings; the next step reads
// its rows as any step's output.
func TestPipelineParallelStep(t *testing.T) {
	spec, err := decodePipeline(t, irisParallel())
	if err != nil {
		t.Fatal(err)
	}
	g, err := pipelinejob.NewPipelineGraph(spec)
	if err != nil {
		t.Fatal(err)
	}
	if d := g.Dependencies("view"); len(d) != 1 || d[0] != "batch_prediction" {
		t.Fatalf("view depends on %v", d)
	}
	js, err := g.Resolve("batch_prediction", pipelinejob.PipelineRun{})
	if err != nil {
		t.Fatal(err)
	}
	p := js.Parallel
	if p == nil {
		t.Fatal("the resolved job has no parallel settings")
	}
	wantArgs := "--model ${{inputs.score_model}} --threshold ${{inputs.threshold}}"
	if js.Type != job.JobTypeCommand || js.Command != job.ParallelCommand(wantArgs) || p.ProgramArguments != wantArgs {
		t.Errorf("type %q command %q arguments %q", js.Type, js.Command, p.ProgramArguments)
	}
	if js.Code != codeID || js.Environment == nil || js.Compute != "cpu-cluster" {
		t.Errorf("code %q environment %v compute %q", js.Code, js.Environment, js.Compute)
	}
	if js.Resources == nil || js.Resources.InstanceCount != 2 || js.EnvironmentVariables["AZUREML_PARALLEL_EXAMPLE"] != "2a_yaml" {
		t.Errorf("resources %+v variables %v", js.Resources, js.EnvironmentVariables)
	}
	if in := js.Inputs["input_data"]; in == nil || in.Type != "mltable" || in.Path != tableID {
		t.Errorf("input_data %+v", in)
	}
	if p.InputData != "${{inputs.input_data}}" || p.MiniBatchSize != "10kb" || p.Concurrency() != 2 || p.LoggingLevel != "DEBUG" ||
		p.MaxRetries() != 2 || p.TimeoutSeconds() != 60 || job.Threshold(p.ErrorThreshold) != 5 || job.Threshold(p.MiniBatchErrorThreshold) != 5 ||
		p.EntryScript != "iris_prediction.py" || p.AppendRowTo != "${{outputs.job_output_file}}" || p.AppendRowFile != "" {
		t.Errorf("parallel settings %+v", p)
	}
	if o := js.Outputs["job_output_file"]; o == nil || o.Type != "uri_file" {
		t.Errorf("output %+v", o)
	}
	// Resolving copies: the step's own settings are as written.
	js.Parallel.MiniBatchSize = "1"
	if spec.Jobs["batch_prediction"].Component.Parallel.MiniBatchSize != "10kb" {
		t.Error("resolving shares the step's parallel settings with its job")
	}
	view, err := g.Resolve("view", pipelinejob.PipelineRun{Outputs: map[string]map[string]string{"batch_prediction": {"job_output_file": "sha256:" + strings.Repeat("f", 64)}}})
	if err != nil {
		t.Fatal(err)
	}
	if view.Parallel != nil || view.Inputs["rows"].Type != "uri_file" {
		t.Errorf("view %+v reads %+v", view.Parallel, view.Inputs["rows"])
	}
}

// Rows appended to a uri_folder output go to a file of Azure's name in
// it; optional blocks of the program arguments are decided as a
// command's.
func TestPipelineParallelStepFolderRows(t *testing.T) {
	doc := irisParallel()
	jobtest.Set(doc, "jobs.batch_prediction.outputs.job_output_file", map[string]any{"type": "uri_folder"})
	jobtest.Set(doc, "jobs.view", nil)
	js := resolveStep(t, doc, "batch_prediction")
	if js.Parallel.AppendRowFile != "parallel_run_step.txt" {
		t.Errorf("append_row_file %q", js.Parallel.AppendRowFile)
	}
}

// A registered parallel component (here inlined, as the CLI inlines
// ./score.yml) runs as an inline step does; a step that names one takes
// its settings from it.
func TestPipelineParallelComponentStep(t *testing.T) {
	doc := irisParallel()
	step := doc["jobs"].(map[string]any)["batch_prediction"].(map[string]any)
	comp := map[string]any{"type": "parallel", "name": "iris_score", "version": "1",
		"inputs": map[string]any{"input_data": map[string]any{"type": "mltable"}, "score_model": map[string]any{"type": "uri_folder"},
			"threshold": map[string]any{"type": "number", "default": 0.5}},
		"outputs": map[string]any{"job_output_file": map[string]any{"type": "uri_file"}}}
	for _, k := range []string{"input_data", "mini_batch_size", "max_concurrency_per_instance", "logging_level", "error_threshold",
		"mini_batch_error_threshold", "retry_settings", "task"} {
		comp[k] = step[k]
		delete(step, k)
	}
	step["component"] = comp
	delete(step["inputs"].(map[string]any), "threshold")
	js := resolveStep(t, doc, "batch_prediction")
	if js.Parallel == nil || js.Parallel.EntryScript != "iris_prediction.py" || job.FormatInputValue(js.Inputs["threshold"].Value) != "0.5" || js.Code != codeID {
		t.Errorf("job %+v parallel %+v", js, js.Parallel)
	}
}

// resolveStep decodes and checks a pipeline and resolves one of its
// steps with no upstream outputs.
func resolveStep(t *testing.T, doc map[string]any, step string) *job.JobSpec {
	t.Helper()
	spec, err := decodePipeline(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	g, err := pipelinejob.NewPipelineGraph(spec)
	if err != nil {
		t.Fatal(err)
	}
	js, err := g.Resolve(step, pipelinejob.PipelineRun{})
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// A parallel step's mistakes are refused naming the field and the rule,
// before anything is submitted.
func TestPipelineParallelStepRefusals(t *testing.T) {
	at := func(k string, v any) func(d map[string]any) {
		return func(d map[string]any) { jobtest.Set(d, "jobs.batch_prediction."+k, v) }
	}
	const s = "jobs.batch_prediction."
	checkRefusals(t, irisParallel, []refusal{
		{"input_data not a reference", s + "input_data", "${{inputs.<name>}}", at("input_data", "./data")},
		{"input_data missing", s + "input_data", "is required", at("input_data", nil)},
		{"input_data names no input", s + "input_data", "not declared", at("input_data", "${{inputs.nope}}")},
		{"input_data names a value", s + "input_data", "is a literal input", at("input_data", "${{inputs.threshold}}")},
		{"input_data an output", s + "input_data", "${{inputs.<name>}}", at("input_data", "${{outputs.job_output_file}}")},
		{"mini_batch_size words", s + "mini_batch_size", "whole number", at("mini_batch_size", "ten")},
		{"mini_batch_size zero", s + "mini_batch_size", "whole number", at("mini_batch_size", 0)},
		{"mini_batch_size a mapping", s + "mini_batch_size", "", at("mini_batch_size", map[string]any{"a": 1})},
		{"threshold below -1", s + "error_threshold", "-1 (no limit)", at("error_threshold", -2)},
		{"mini-batch threshold a fraction", s + "mini_batch_error_threshold", "whole number", at("mini_batch_error_threshold", 1.5)},
		{"no concurrency", s + "max_concurrency_per_instance", "at least 1", at("max_concurrency_per_instance", 0)},
		{"fork bomb", s + "max_concurrency_per_instance", "from 1 to 256", at("max_concurrency_per_instance", 100000)},
		{"timeout zero", s + "retry_settings.timeout", "at least 1", at("retry_settings.timeout", 0)},
		{"negative retries", s + "retry_settings.max_retries", "from 0 to 100", at("retry_settings.max_retries", -1)},
		{"unknown retry key", s + "retry_settings.backoff", "unknown key", at("retry_settings.backoff", 2)},
		{"logging level", s + "logging_level", "Python's logging levels", at("logging_level", "LOUD")},
		{"partition keys on files", s + "partition_keys", "apply to an mltable input", func(d map[string]any) {
			at("input_data", "${{inputs.score_model}}")(d)
			at("partition_keys", []any{"Store"})(d)
		}},
		{"partition keys twice", s + "partition_keys[1]", "named twice", at("partition_keys", []any{"Store", "Store"})},
		{"partition keys not a list", s + "partition_keys", "list of column names", at("partition_keys", "Store")},
		{"no task", s + "task", "is required", at("task", nil)},
		{"model task", s + "task.type", "not run by Shoal", at("task.type", "model")},
		{"unknown task type", s + "task.type", "run_function", at("task.type", "shell")},
		{"unknown task key", s + "task.command", "unknown key", at("task.command", "rm -rf /")},
		{"no entry script", s + "task.entry_script", "is required", at("task.entry_script", nil)},
		{"entry script outside code", s + "task.entry_script", "leaves the folder", at("task.entry_script", "../../etc/x.py")},
		{"entry script absolute", s + "task.entry_script", "relative", at("task.entry_script", "/etc/x.py")},
		{"entry script not Python", s + "task.entry_script", ".py", at("task.entry_script", "run.sh")},
		{"entry script two lines", s + "task.entry_script", "one line", at("task.entry_script", "a.py\nb.py")},
		{"no code", s + "task.code", "is required", at("task.code", nil)},
		{"append to a value", s + "task.append_row_to", "${{outputs.<name>}}", at("task.append_row_to", "${{inputs.threshold}}")},
		{"append to no output", s + "task.append_row_to", "not declared", at("task.append_row_to", "${{outputs.nope}}")},
		{"append to a table", s + "task.append_row_to", "is a mltable output", at("outputs.job_output_file", map[string]any{"type": "mltable"})},
		{"arguments name no input", s + "command", "", at("task.program_arguments", "--x ${{inputs.nope}}")},
		{"a command of its own", s + "command", "unknown key", at("command", "rm -rf /")},
		{"a distribution", s + "distribution", "unknown key", at("distribution", map[string]any{"type": "mpi"})},
		{"settings beside a component", s + "error_threshold", "from the component", at("component", "azureml:score:1")},
		{"a parallel step running a command component", s + "component", "is a command component", func(d map[string]any) {
			step := d["jobs"].(map[string]any)["batch_prediction"].(map[string]any)
			for k := range step {
				if k != "type" && k != "inputs" && k != "outputs" && k != "compute" {
					delete(step, k)
				}
			}
			step["component"] = jobtest.TrainComponent()
		}},
		{"a command step running a parallel component", "jobs.view.type", "write type: parallel", func(d map[string]any) {
			jobtest.Set(d, "jobs.view", map[string]any{"component": map[string]any{"type": "parallel", "inputs": map[string]any{"d": map[string]any{"type": "uri_folder"}},
				"input_data": "${{inputs.d}}", "task": map[string]any{"code": codeID, "entry_script": "s.py", "environment": "azureml:sklearn:1"}},
				"inputs": map[string]any{"d": "${{parent.jobs.batch_prediction.outputs.job_output_file}}"}})
		}},
	})
}

// No input to split is refused at resolution too, when the step binds
// a value where the component's data input is.
func TestPipelineParallelStepResolveChecks(t *testing.T) {
	doc := irisParallel()
	jobtest.Set(doc, "jobs.batch_prediction.inputs.input_data", "just text")
	_, err := decodePipeline(t, doc)
	if core.ErrorCode(err) != core.EINVALID || !strings.Contains(core.ErrorField(err), "input_data") {
		t.Fatalf("got %v (field %q), want a refusal naming input_data", err, core.ErrorField(err))
	}
}

// A parallel step inside a pipeline component is expanded as any step,
// its settings kept; references written with spaces reach the job in one
// spelling, the one the driver and the ledger read.
func TestPipelineParallelStepInComponent(t *testing.T) {
	inner := irisParallel()["jobs"].(map[string]any)["batch_prediction"].(map[string]any)
	jobtest.Set(inner, "inputs.input_data", "${{parent.inputs.table}}")
	jobtest.Set(inner, "input_data", "${{ inputs.input_data }}")
	jobtest.Set(inner, "outputs.job_output_file", "${{parent.outputs.rows}}")
	doc := map[string]any{
		"type": "pipeline", "settings": map[string]any{"default_compute": "cpu"},
		"inputs": map[string]any{"table": map[string]any{"type": "mltable", "path": tableID}},
		"jobs": map[string]any{
			"scoring": map[string]any{"type": "pipeline", "inputs": map[string]any{"table": "${{parent.inputs.table}}"}, "component": map[string]any{
				"type":    "pipeline",
				"inputs":  map[string]any{"table": map[string]any{"type": "mltable"}},
				"outputs": map[string]any{"rows": map[string]any{"type": "uri_file"}},
				"jobs":    map[string]any{"score": inner},
			}},
		},
	}
	js := resolveStep(t, doc, "scoring-score")
	if js.Parallel == nil || js.Parallel.InputData != "${{inputs.input_data}}" || js.Inputs["input_data"].Path != tableID {
		t.Fatalf("nested parallel step %+v inputs %+v", js.Parallel, js.Inputs)
	}
}

// The driver's own variable, and Shoal's, cannot be set by the step: the
// command runs "$SHOAL_PARALLEL_DRIVER".
func TestPipelineParallelStepReservedVariables(t *testing.T) {
	checkRefusals(t, irisParallel, []refusal{
		{"the driver's path", "jobs.batch_prediction.environment_variables.SHOAL_PARALLEL_DRIVER", "reserved", func(d map[string]any) {
			jobtest.Set(d, "jobs.batch_prediction.environment_variables.SHOAL_PARALLEL_DRIVER", "/tmp/mine.py")
		}},
		{"the run's name", "jobs.batch_prediction.environment_variables.AZUREML_RUN_ID", "reserved", func(d map[string]any) {
			jobtest.Set(d, "jobs.batch_prediction.environment_variables.AZUREML_RUN_ID", "x")
		}},
		{"an output's path", "jobs.batch_prediction.environment_variables.AZUREML_OUTPUT_job_output_file", "reserved", func(d map[string]any) {
			jobtest.Set(d, "jobs.batch_prediction.environment_variables.AZUREML_OUTPUT_job_output_file", "/etc")
		}},
	})
}
