package pipelinejob_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/jobtest"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
)

// trainEval is a pipeline component of two steps (train → eval), the
// shape of Azure's pipeline_with_train_eval_pipeline_component, with its
// compute promoted to an input.
func trainEval() map[string]any {
	return map[string]any{
		"$schema": "https://azuremlschemas.azureedge.net/latest/pipelineComponent.schema.json",
		"type":    "pipeline", "name": "train_eval",
		"inputs": map[string]any{
			"training_data":      map[string]any{"type": "uri_folder"},
			"epochs":             map[string]any{"type": "integer"},
			"schedule":           map[string]any{"type": "string", "default": "time-based"},
			"train_node_compute": map[string]any{"type": "string"},
		},
		"outputs": map[string]any{
			"trained_model":     map[string]any{"type": "uri_folder"},
			"evaluation_report": map[string]any{"type": "uri_folder"},
		},
		"jobs": map[string]any{
			"train_job": map[string]any{
				"type": "command", "component": jobtest.TrainComponent(),
				"compute": "${{parent.inputs.train_node_compute}}",
				"inputs": map[string]any{
					"training_data": "${{parent.inputs.training_data}}",
					"max_epochs":    "${{parent.inputs.epochs}}",
				},
				"outputs": map[string]any{"model_output": "${{parent.outputs.trained_model}}"},
			},
			"eval_job": map[string]any{
				"command":     "python eval.py --m ${{inputs.m}} --s ${{inputs.s}} --out ${{outputs.report}}",
				"environment": "azureml:sklearn:1",
				"inputs": map[string]any{
					"m": "${{parent.jobs.train_job.outputs.model_output}}",
					"s": "${{parent.inputs.schedule}}",
				},
				"outputs": map[string]any{"report": "${{parent.outputs.evaluation_report}}"},
			},
		},
	}
}

// twoModels runs the component twice and compares, as Azure's example.
func twoModels() map[string]any {
	use := func(epochs any) map[string]any {
		return map[string]any{
			"type": "pipeline", "component": trainEval(),
			"inputs": map[string]any{
				"training_data":      "${{parent.inputs.data}}",
				"epochs":             epochs,
				"train_node_compute": "${{parent.inputs.compute_train_node}}",
			},
		}
	}
	return map[string]any{
		"type": "pipeline", "display_name": "two models",
		"settings": map[string]any{"default_compute": "azureml:cpu-cluster"},
		"inputs": map[string]any{
			"data":               map[string]any{"type": "uri_folder", "path": "sha256:" + strings.Repeat("a", 64)},
			"compute_train_node": "gpu-cluster",
			"compare_node":       "cpu-small",
			"epochs2":            20,
		},
		"outputs": map[string]any{"best": map[string]any{"mode": "upload"}},
		"jobs": map[string]any{
			"model1": use(5),
			"model2": use("${{parent.inputs.epochs2}}"),
			"compare": map[string]any{
				"command":     "python compare.py ${{inputs.a}} ${{inputs.b}} ${{outputs.best}}",
				"environment": "azureml:sklearn:1",
				"compute":     "${{parent.inputs.compare_node}}",
				"inputs": map[string]any{
					"a": "${{parent.jobs.model1.outputs.trained_model}}",
					"b": "${{parent.jobs.model2.outputs.evaluation_report}}",
				},
				"outputs": map[string]any{"best": "${{parent.outputs.best}}"},
			},
		},
	}
}

// A step of type pipeline is expanded into the parent's graph: its steps
// named <step>-<inner>, bound through to what the step binds, computes
// promoted to inputs resolved, and the parent's bindings to the
// component's outputs bound to the inner steps that produce them.
func TestPipelineComponentExpanded(t *testing.T) {
	spec, err := decodePipeline(t, twoModels())
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	want := []string{"compare", "model1-eval_job", "model1-train_job", "model2-eval_job", "model2-train_job"}
	if got := core.SortedKeys(spec.Jobs); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("steps %v, want %v", got, want)
	}
	tr := spec.Jobs["model2-train_job"]
	if tr.Compute != "gpu-cluster" || spec.Jobs["compare"].Compute != "cpu-small" {
		t.Errorf("computes %q and %q, want the inputs' gpu-cluster and cpu-small", tr.Compute, spec.Jobs["compare"].Compute)
	}
	if b := tr.Inputs["training_data"].Bind; b != "${{parent.inputs.data}}" {
		t.Errorf("training_data bound to %q, want the pipeline's input", b)
	}
	if b := tr.Inputs["max_epochs"].Bind; b != "${{parent.inputs.epochs2}}" {
		t.Errorf("model2's epochs bound to %q", b)
	}
	if v := spec.Jobs["model1-train_job"].Inputs["max_epochs"].Value; fmt.Sprint(v) != "5" {
		t.Errorf("model1's epochs %v (%T), want 5", v, v)
	}
	if v := spec.Jobs["model1-eval_job"].Inputs["s"].Value; v != "time-based" {
		t.Errorf("an unbound input took %v, want the component's default", v)
	}
	if b := spec.Jobs["model1-eval_job"].Inputs["m"].Bind; b != "${{parent.jobs.model1-train_job.outputs.model_output}}" {
		t.Errorf("inner binding %q, want the renamed step", b)
	}
	cmp := spec.Jobs["compare"]
	if a, b := cmp.Inputs["a"].Bind, cmp.Inputs["b"].Bind; a != "${{parent.jobs.model1-train_job.outputs.model_output}}" || b != "${{parent.jobs.model2-eval_job.outputs.report}}" {
		t.Errorf("compare reads %q and %q, want the producing inner steps", a, b)
	}
	g, err := pipelinejob.NewPipelineGraph(spec)
	if err != nil {
		t.Fatal(err)
	}
	if d := g.Dependencies("compare"); strings.Join(d, ",") != "model1-train_job,model2-eval_job" {
		t.Errorf("compare depends on %v", d)
	}
	// The inner steps resolve to command jobs as any step.
	js, err := g.Resolve("model1-train_job", pipelinejob.PipelineRun{})
	if err != nil {
		t.Fatal(err)
	}
	if js.Compute != "gpu-cluster" || fmt.Sprint(js.Inputs["max_epochs"].Value) != "5" {
		t.Errorf("resolved %+v on %q", js.Inputs, js.Compute)
	}
}

// A component's output bound to the parent's output is written by the
// inner step that produces it.
func TestPipelineComponentOutputToParent(t *testing.T) {
	doc := twoModels()
	doc["outputs"].(map[string]any)["report"] = map[string]any{"type": "uri_folder"}
	doc["jobs"].(map[string]any)["model1"].(map[string]any)["outputs"] = map[string]any{"evaluation_report": "${{parent.outputs.report}}"}
	spec, err := decodePipeline(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := pipelinejob.NewPipelineGraph(spec)
	if src := g.OutputSources()["report"]; src.Step != "model1-eval_job" || src.Output != "report" {
		t.Fatalf("pipeline output report from %+v", src)
	}
}

// Nested pipeline components (a component whose step is a component)
// expand level by level, and nesting is bounded.
func TestPipelineComponentNestedAndDepth(t *testing.T) {
	wrap := func(inner map[string]any) map[string]any {
		return map[string]any{
			"type": "pipeline",
			"inputs": map[string]any{"training_data": map[string]any{"type": "uri_folder"}, "epochs": map[string]any{"type": "integer", "default": 3},
				"train_node_compute": map[string]any{"type": "string", "default": "cpu-cluster"}},
			"outputs": map[string]any{"trained_model": map[string]any{"type": "uri_folder"}},
			"jobs": map[string]any{"inner": map[string]any{
				"type": "pipeline", "component": inner,
				"inputs": map[string]any{
					"training_data": "${{parent.inputs.training_data}}", "epochs": "${{parent.inputs.epochs}}",
					"train_node_compute": "${{parent.inputs.train_node_compute}}",
				},
				"outputs": map[string]any{"trained_model": "${{parent.outputs.trained_model}}"},
			}},
		}
	}
	build := func(levels int) map[string]any {
		c := trainEval()
		delete(c["outputs"].(map[string]any), "evaluation_report")
		delete(c["jobs"].(map[string]any), "eval_job")
		for i := 1; i < levels; i++ {
			c = wrap(c)
		}
		doc := twoModels()
		jobs := doc["jobs"].(map[string]any)
		delete(jobs, "model2")
		jobs["compare"].(map[string]any)["inputs"].(map[string]any)["b"] = "${{parent.jobs.model1.outputs.trained_model}}"
		jobs["model1"].(map[string]any)["component"] = c
		return doc
	}
	spec, err := decodePipeline(t, build(3))
	if err != nil {
		t.Fatalf("three levels: %v", err)
	}
	if s := spec.Jobs["model1-inner-inner-train_job"]; s == nil || s.Compute != "gpu-cluster" {
		t.Fatalf("steps %v", core.SortedKeys(spec.Jobs))
	}
	if b := spec.Jobs["compare"].Inputs["b"].Bind; b != "${{parent.jobs.model1-inner-inner-train_job.outputs.model_output}}" {
		t.Errorf("compare reads %q", b)
	}
	// An error three levels down names where it is written.
	deep := build(3)
	jobtest.Set(deep, "jobs.model1.component.jobs.inner.component.jobs.inner.component.jobs.train_job.environment_variables", map[string]any{"SHOAL_X": "1"})
	if _, err := decodePipeline(t, deep); !strings.HasPrefix(core.ErrorField(err), "jobs.model1.component.jobs.inner.component.jobs.inner.component.jobs.train_job.") {
		t.Errorf("an error three levels down: %v (field %q)", err, core.ErrorField(err))
	}
	_, err = decodePipeline(t, build(pipelinejob.MaxPipelineDepth+1))
	if core.ErrorCode(err) != core.EINVALID || !strings.Contains(core.ErrorMessage(err), "nest more than") ||
		!strings.HasPrefix(core.ErrorField(err), "jobs.model1.component.jobs.inner.component") {
		t.Fatalf("too deep: %v (field %q)", err, core.ErrorField(err))
	}
}

// Attacks and mistakes in a pipeline component are refused naming the
// field where they are written.
func TestPipelineComponentRefusals(t *testing.T) {
	checkRefusals(t, twoModels, []refusal{
		{"unknown output of a nested pipeline", "jobs.compare.inputs.a", "whose outputs are", func(d map[string]any) {
			jobtest.Set(d, "jobs.compare.inputs.a", "${{parent.jobs.model1.outputs.nope}}")
		}},
		{"undeclared output configured", "jobs.model1.outputs.bogus", "declares no output", func(d map[string]any) {
			jobtest.Set(d, "jobs.model1.outputs", map[string]any{"bogus": nil})
		}},
		{"required input not bound", "jobs.model1.component.jobs.train_job.inputs.max_epochs", "is required", func(d map[string]any) {
			jobtest.Set(d, "jobs.model1.inputs.epochs", nil)
		}},
		{"inner binding to an undeclared input", "jobs.model1.component.jobs.eval_job.inputs.s", "declares", func(d map[string]any) {
			jobtest.Set(d, "jobs.model1.component.jobs.eval_job.inputs.s", "${{parent.inputs.nope}}")
		}},
		{"inner binding to a step of the parent", "jobs.model1.component.jobs.eval_job.inputs.m", "not a step of the pipeline component", func(d map[string]any) {
			jobtest.Set(d, "jobs.model1.component.jobs.eval_job.inputs.m", "${{parent.jobs.compare.outputs.best}}")
		}},
		{"component output bound by no step", "jobs.model1.component.outputs.extra", "bound by none", func(d map[string]any) {
			jobtest.Set(d, "jobs.model1.component.outputs.extra", map[string]any{"type": "uri_folder"})
		}},
		{"inner output to an undeclared output", "jobs.model1.component.jobs.eval_job.outputs.report", "declares", func(d map[string]any) {
			jobtest.Set(d, "jobs.model1.component.jobs.eval_job.outputs.report", "${{parent.outputs.nope}}")
		}},
		{"name clash", "jobs.model1", "already is", func(d map[string]any) {
			jobtest.Set(d, "jobs.model1-train_job", map[string]any{"command": "true", "environment": "azureml:sklearn:1"})
		}},
		{"registered pipeline component", "jobs.model1.component", "written in a file", func(d map[string]any) {
			jobtest.Set(d, "jobs.model1.component", "azureml:train_eval:1")
		}},
		{"command component in a pipeline step", "jobs.model1.component.type", "must be pipeline", func(d map[string]any) {
			jobtest.Set(d, "jobs.model1.component.type", "command")
		}},
		{"no jobs", "jobs.model1.component.jobs", "is required", func(d map[string]any) {
			jobtest.Set(d, "jobs.model1.component.jobs", nil)
		}},
		{"unknown key on the step", "jobs.model1.environment", "unknown key", func(d map[string]any) {
			jobtest.Set(d, "jobs.model1.environment", "azureml:x:1")
		}},
		{"compute bound to a path", "jobs.model1.component.jobs.train_job.compute", "a compute is a name", func(d map[string]any) {
			jobtest.Set(d, "jobs.model1.inputs.train_node_compute", map[string]any{"type": "uri_folder", "path": "sha256:" + strings.Repeat("b", 64)})
		}},
		// Errors found once expanded name where the step is written.
		{"wrong literal for an inner step", "jobs.model1.component.jobs.train_job.inputs.max_epochs", "", func(d map[string]any) {
			jobtest.Set(d, "jobs.model1.inputs.epochs", "many")
		}},
		{"inner step without a command", "jobs.model1.component.jobs.eval_job", "needs command", func(d map[string]any) {
			jobtest.Set(d, "jobs.model1.component.jobs.eval_job.command", nil)
		}},
		{"top compute bound to a missing input", "jobs.compare.compute", "literal input", func(d map[string]any) {
			jobtest.Set(d, "jobs.compare.compute", "${{parent.inputs.nope}}")
		}},
	})
}

// refusal is a change to a document that must be refused: EINVALID on
// field, its message saying msg.
type refusal struct {
	name, field, msg string
	change           func(d map[string]any)
}

// checkRefusals applies each change to a fresh document from base and
// checks the refusal.
func checkRefusals(t *testing.T, base func() map[string]any, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := base()
			tc.change(doc)
			_, err := decodePipeline(t, doc)
			if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != tc.field || !strings.Contains(core.ErrorMessage(err), tc.msg) {
				t.Fatalf("got %v (field %q), want EINVALID on %s saying %q", err, core.ErrorField(err), tc.field, tc.msg)
			}
		})
	}
}

// A pipeline step's input bound to another pipeline step's output reads
// the inner step that produces it; two pipeline components reading each
// other's outputs are a cycle, refused.
func TestPipelineComponentsReadEachOther(t *testing.T) {
	doc := twoModels()
	jobtest.Set(doc, "jobs.model2.inputs.training_data", "${{parent.jobs.model1.outputs.trained_model}}")
	spec, err := decodePipeline(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	if b := spec.Jobs["model2-train_job"].Inputs["training_data"].Bind; b != "${{parent.jobs.model1-train_job.outputs.model_output}}" {
		t.Errorf("model2's training data %q, want model1's inner producer", b)
	}
	g, _ := pipelinejob.NewPipelineGraph(spec)
	if d := g.Dependencies("model2-train_job"); len(d) != 1 || d[0] != "model1-train_job" {
		t.Errorf("model2-train_job depends on %v", d)
	}
	jobtest.Set(doc, "jobs.model1.inputs.training_data", "${{parent.jobs.model2.outputs.trained_model}}")
	if _, err := decodePipeline(t, doc); core.ErrorCode(err) != core.EINVALID || !strings.Contains(core.ErrorMessage(err), "cycle") {
		t.Errorf("components reading each other: %v, want a cycle refused", err)
	}
}
