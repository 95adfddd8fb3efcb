package pipelinejob_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobtest"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/store"
)

// threeSteps is prep → train → score, with data passed by outputs: the
// shape of Azure's pipeline examples.
func threeSteps() map[string]any {
	return map[string]any{
		"$schema":      "https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json",
		"type":         "pipeline",
		"display_name": "prep-train-score", "experiment_name": "pipelines",
		"settings": map[string]any{"default_compute": "azureml:cpu-cluster", "continue_on_step_failure": false, "default_datastore": "azureml:workspaceblobstore"},
		"inputs": map[string]any{
			"raw":    map[string]any{"type": "uri_folder", "path": "sha256:" + strings.Repeat("a", 64)},
			"epochs": 5,
		},
		"outputs": map[string]any{"final_model": map[string]any{"mode": "upload"}},
		"jobs": map[string]any{
			"prep": map[string]any{
				"type": "command", "command": "python prep.py --raw ${{inputs.raw}} --out ${{outputs.clean}}",
				"environment": "azureml:sklearn:1",
				"inputs":      map[string]any{"raw": "${{parent.inputs.raw}}"},
				"outputs":     map[string]any{"clean": nil},
			},
			"train": map[string]any{
				"component": jobtest.TrainComponent(),
				"compute":   "gpu-cluster",
				"inputs": map[string]any{
					"training_data": "${{parent.jobs.prep.outputs.clean}}",
					"max_epochs":    "${{parent.inputs.epochs}}",
				},
				"outputs":               map[string]any{"model_output": "${{parent.outputs.final_model}}"},
				"environment_variables": map[string]any{"SEED": 7},
			},
			"score": map[string]any{
				"command":     "python score.py --model ${{inputs.model}} --data ${{inputs.data}} --out ${{outputs.scores}}",
				"environment": "azureml:sklearn:1",
				"inputs": map[string]any{
					"model": map[string]any{"type": "uri_folder", "path": "${{parent.jobs.train.outputs.model_output}}", "mode": "download"},
					"data":  "${{parent.jobs.prep.outputs.clean}}",
				},
				"outputs": map[string]any{"scores": map[string]any{"type": "uri_folder", "mode": "rw_mount"}},
			},
		},
	}
}

func decodePipeline(t testing.TB, doc map[string]any) (*job.PipelineSpec, error) {
	t.Helper()
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := pipelinejob.DecodePipelineSpec(raw)
	if err != nil {
		return nil, err
	}
	return spec, pipelinejob.NormalizePipelineSpec(spec)
}

func TestPipelineThreeSteps(t *testing.T) {
	spec, err := decodePipeline(t, threeSteps())
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	g, err := pipelinejob.NewPipelineGraph(spec)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := g.Order(), []string{"prep", "train", "score"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Order = %v, want %v", got, want)
	}
	if got, want := g.Dependencies("score"), []string{"prep", "train"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Dependencies(score) = %v, want %v", got, want)
	}
	wantEdges := []pipelinejob.PipelineEdge{
		{From: "prep", Output: "clean", To: "score", Input: "data"},
		{From: "train", Output: "model_output", To: "score", Input: "model"},
		{From: "prep", Output: "clean", To: "train", Input: "training_data"},
	}
	if got := g.Edges(); !reflect.DeepEqual(got, wantEdges) {
		t.Errorf("Edges = %+v, want %+v", got, wantEdges)
	}
	if got, want := g.OutputSources(), map[string]pipelinejob.PipelineOutputSource{"final_model": {Step: "train", Output: "model_output"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("OutputSources = %v, want %v", got, want)
	}
	if spec.Settings.DefaultCompute != "cpu-cluster" || spec.Settings.DefaultDatastore != "azureml:workspaceblobstore" {
		t.Errorf("settings = %+v", spec.Settings)
	}

	prepOut := "sha256:" + strings.Repeat("b", 64)
	run := pipelinejob.PipelineRun{Outputs: map[string]map[string]string{"prep": {"clean": prepOut}}}
	prep, err := g.Resolve("prep", run)
	if err != nil {
		t.Fatalf("Resolve(prep): %v", err)
	}
	if prep.Compute != "cpu-cluster" || prep.Inputs["raw"].Path != spec.Inputs["raw"].Path || prep.Outputs["clean"].Type != job.InputTypeURIFolder {
		t.Errorf("prep = %+v; want the default compute, the pipeline's raw input, a uri_folder output", prep)
	}
	train, err := g.Resolve("train", run)
	if err != nil {
		t.Fatalf("Resolve(train): %v", err)
	}
	wantCmd := "python train.py --data ${{inputs.training_data}} --epochs ${{inputs.max_epochs}}  --kind ${{inputs.kind}} --out ${{outputs.model_output}}"
	if train.Command != wantCmd {
		t.Errorf("train command = %q, want %q (the optional block of lr, unbound, dropped)", train.Command, wantCmd)
	}
	if in := train.Inputs["training_data"]; in == nil || in.Path != prepOut || in.Type != job.InputTypeURIFolder {
		t.Errorf("train training_data = %+v, want prep's output %s", in, prepOut)
	}
	if v := train.Inputs["max_epochs"]; v == nil || job.FormatInputValue(v.Value) != "5" {
		t.Errorf("train max_epochs = %+v, want the pipeline's 5", v)
	}
	if v := train.Inputs["kind"]; v == nil || v.Value != "fast" {
		t.Errorf("train kind = %+v, want the default fast", v)
	}
	if _, ok := train.Inputs["lr"]; ok {
		t.Error("train has lr, an optional input nobody bound")
	}
	if train.Compute != "gpu-cluster" || train.EnvironmentVariables["SEED"] != "7" || train.Environment != "azureml:sklearn@latest" || train.Code == "" {
		t.Errorf("train = %+v; want the step's compute and variables, the component's environment and code", train)
	}
	if o := train.Outputs["model_output"]; o == nil || o.Mode != "upload" {
		t.Errorf("train output = %+v, want the pipeline output's mode upload", o)
	}
	_, err = g.Resolve("score", run)
	if core.ErrorField(err) != "jobs.score.inputs.model" {
		t.Errorf("Resolve(score) before train produced its model: %v; want an error naming jobs.score.inputs.model", err)
	}
	run.Outputs["train"] = map[string]string{"model_output": "sha256:" + strings.Repeat("d", 64)}
	score, err := g.Resolve("score", run)
	if err != nil {
		t.Fatalf("Resolve(score): %v", err)
	}
	if in := score.Inputs["model"]; in.Path != run.Outputs["train"]["model_output"] || in.Mode != "download" {
		t.Errorf("score model = %+v", in)
	}

	// The spec round-trips through JSON (the store) to the same graph.
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var back job.PipelineSpec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := pipelinejob.NormalizePipelineSpec(&back); err != nil {
		t.Fatalf("the stored spec no longer validates: %v", err)
	}
	g2, _ := pipelinejob.NewPipelineGraph(&back)
	if again, err := g2.Resolve("train", run); err != nil || again.Command != train.Command {
		t.Errorf("Resolve after the round trip = %+v, %v", again, err)
	}
}

// Every malformed pipeline is refused naming its path.
func TestPipelineErrors(t *testing.T) {
	for _, tc := range []struct {
		name, field, msg string
		edit             func(map[string]any) map[string]any
	}{
		{"cycle", "jobs.prep.inputs.raw", "cycle (prep → score → prep)", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.prep.inputs.raw", "${{parent.jobs.score.outputs.scores}}")
		}},
		{"self cycle", "jobs.prep.inputs.raw", "jobs.prep.inputs.raw reads jobs.prep.outputs.clean", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.prep.inputs.raw", "${{parent.jobs.prep.outputs.clean}}")
		}},
		{"unknown step", "jobs.train.inputs.training_data", `step "prepare"`, func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.inputs.training_data", "${{parent.jobs.prepare.outputs.clean}}")
		}},
		{"unknown output", "jobs.train.inputs.training_data", `output "cleaned"`, func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.inputs.training_data", "${{parent.jobs.prep.outputs.cleaned}}")
		}},
		{"unknown parent input", "jobs.prep.inputs.raw", `pipeline input "rawdata"`, func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.prep.inputs.raw", "${{parent.inputs.rawdata}}")
		}},
		{"unknown parent output", "jobs.train.outputs.model_output", `pipeline output "model"`, func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.outputs.model_output", "${{parent.outputs.model}}")
		}},
		{"unbound pipeline output", "outputs.final_model", "no step binds", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.outputs", nil)
		}},
		{"output bound twice", "jobs.train.outputs.model_output", "already bound", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.prep.outputs.clean", "${{parent.outputs.final_model}}")
		}},
		{"output binding as input", "jobs.prep.inputs.raw", "output binding", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.prep.inputs.raw", "${{parent.outputs.final_model}}")
		}},
		{"input binding as output", "jobs.prep.outputs.clean", "input binding", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.prep.outputs.clean", "${{parent.inputs.raw}}")
		}},
		{"malformed binding", "jobs.prep.inputs.raw", "is not a binding", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.prep.inputs.raw", "${{parent.data.raw}}")
		}},
		{"partial binding", "jobs.prep.inputs.raw", "whole binding", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.prep.inputs.raw", "data/${{parent.inputs.raw}}")
		}},
		{"own inputs in a binding", "jobs.prep.inputs.raw", "step's own inputs", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.prep.inputs.raw", "${{inputs.raw}}")
		}},
		{"literal for a folder", "jobs.train.inputs.training_data", "uri_folder", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.inputs.training_data", 3)
		}},
		{"folder for an integer", "jobs.train.inputs.max_epochs", "integer", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.inputs.max_epochs", "${{parent.jobs.prep.outputs.clean}}")
		}},
		{"pipeline path for an integer", "jobs.train.inputs.max_epochs", "pipeline input raw", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.inputs.max_epochs", "${{parent.inputs.raw}}")
		}},
		{"not an integer", "jobs.train.inputs.max_epochs", "whole number", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.inputs.max_epochs", 2.5)
		}},
		{"over max", "jobs.train.inputs.max_epochs", "maximum", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.inputs.max_epochs", 500)
		}},
		{"not in enum", "jobs.train.inputs.kind", "allowed values", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.inputs.kind", "medium")
		}},
		{"required input unbound", "jobs.train.inputs.training_data", "required by the component", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.inputs.training_data", nil)
		}},
		{"undeclared output", "jobs.train.outputs.metrics", "declares no output", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.outputs.metrics", map[string]any{})
		}},
		{"inline command unknown ref", "jobs.prep.command", `"rawdata"`, func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.prep.command", "python prep.py ${{inputs.rawdata}}")
		}},
		{"component command unknown ref", "jobs.train.component.command", `"epochs"`, func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.component.command", "python train.py ${{inputs.epochs}}")
		}},
		{"component and command", "jobs.train.command", "not both", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.command", "echo")
		}},
		{"component and environment", "jobs.train.environment", "from the component", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.environment", "azureml:x:1")
		}},
		{"neither", "jobs.prep", "needs command", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.prep.command", nil)
		}},
		// A sweep step takes a trial, not a command (pipeline_sweep_test.go).
		{"sweep step with a command", "jobs.prep.command", "unknown key", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.prep.type", "sweep")
		}},
		{"spark step with keys of its own", "jobs.prep.type", "Shoal does not run Spark jobs", func(d map[string]any) map[string]any {
			d = jobtest.Set(d, "jobs.prep.type", "spark")
			return jobtest.Set(d, "jobs.prep.identity", map[string]any{"type": "user_identity"})
		}},
		{"automl step", "jobs.prep.type", "Shoal does not run AutoML jobs", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.prep.type", "automl")
		}},
		{"unknown step key", "jobs.prep.retries", "unknown key", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.prep.retries", 2)
		}},
		{"unknown top key", "trial", "unknown key", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "trial", map[string]any{})
		}},
		// An unknown settings key is kept and ignored, as Azure does
		// (TestPipelineUnknownSettingsKeptAndWarned); a huge one is not.
		{"unknown settings key too large", "settings.default_env", "over 4096 bytes", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "settings.default_env", strings.Repeat("x", 5000))
		}},
		{"continue not a boolean", "settings.continue_on_step_failure", "true or false", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "settings.continue_on_step_failure", "yes")
		}},
		{"bad step compute", "jobs.train.compute", "local", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.compute", "local")
		}},
		{"bad default compute", "settings.default_compute", "compute", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "settings.default_compute", "Not A Name!")
		}},
		{"no jobs", "jobs", "is required", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs", nil)
		}},
		{"bad step name", "jobs.-prep", "not a step name", func(d map[string]any) map[string]any {
			d["jobs"].(map[string]any)["-prep"] = map[string]any{"command": "echo"}
			return d
		}},
		{"reserved variable", "jobs.train.environment_variables.SHOAL_X", "reserved", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.environment_variables.SHOAL_X", "1")
		}},
		{"bad input mode", "jobs.score.inputs.model.mode", "unknown input mode", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.score.inputs.model.mode", "stream")
		}},
		{"bad output mode", "jobs.score.outputs.scores.mode", "unknown output mode", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.score.outputs.scores.mode", "copy")
		}},
		{"step output path local", "jobs.score.outputs.scores.path", "datastore URI", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.score.outputs.scores.path", "./out")
		}},
		{"binding in a pipeline input", "inputs.epochs", "bindings", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "inputs.epochs", "${{parent.inputs.raw}}")
		}},
		{"registry component", "jobs.train.component", "registry's component", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.component", "azureml://registries/azureml/components/train/versions/1")
		}},
		{"string literal for an integer", "jobs.train.inputs.max_epochs", "whole number", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "inputs.epochs", "five")
		}},
		{"local component file", "jobs.train.component", "inlined by the CLI", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.component", "./train.yml")
		}},
		{"bad component label", "jobs.train.component", "only label", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.component", "azureml:train@prod")
		}},
		{"unclosed optional block", "jobs.train.component.command", "not closed", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "jobs.train.component.command", "python train.py $[[--lr ${{inputs.lr}}")
		}},
		{"wrong pipeline type", "type", "must be pipeline", func(d map[string]any) map[string]any {
			return jobtest.Set(d, "type", "command")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodePipeline(t, tc.edit(threeSteps()))
			if err == nil {
				t.Fatal("accepted")
			}
			if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != tc.field || !strings.Contains(core.ErrorMessage(err), tc.msg) {
				t.Errorf("error = %s / field %q: %s; want EINVALID on %q containing %q", core.ErrorCode(err), core.ErrorField(err), core.ErrorMessage(err), tc.field, tc.msg)
			}
		})
	}
}

// A cycle through three steps names each edge in order.
func TestPipelineCycleMessage(t *testing.T) {
	doc := map[string]any{"type": "pipeline", "compute": "cpu", "jobs": map[string]any{
		"a": map[string]any{"command": "echo ${{inputs.x}}", "inputs": map[string]any{"x": "${{parent.jobs.c.outputs.o}}"}, "outputs": map[string]any{"o": nil}},
		"b": map[string]any{"command": "echo ${{inputs.x}}", "inputs": map[string]any{"x": "${{parent.jobs.a.outputs.o}}"}, "outputs": map[string]any{"o": nil}},
		"c": map[string]any{"command": "echo ${{inputs.x}}", "inputs": map[string]any{"x": "${{parent.jobs.b.outputs.o}}"}, "outputs": map[string]any{"o": nil}},
	}}
	_, err := decodePipeline(t, doc)
	want := "jobs.a.inputs.x: the steps form a cycle (a → c → b → a): jobs.a.inputs.x reads jobs.c.outputs.o, jobs.c.inputs.x reads jobs.b.outputs.o, jobs.b.inputs.x reads jobs.a.outputs.o"
	if !strings.HasPrefix(core.ErrorMessage(err), want) {
		t.Errorf("error = %q, want it to start %q", core.ErrorMessage(err), want)
	}
}

// A diamond with an independent branch, for Ready.
func diamond(t *testing.T, cont bool) *pipelinejob.PipelineGraph {
	t.Helper()
	step := func(reads ...string) map[string]any {
		in := map[string]any{}
		cmd := "echo"
		for _, r := range reads {
			in[r] = "${{parent.jobs." + r + ".outputs.o}}"
			cmd += " ${{inputs." + r + "}}"
		}
		return map[string]any{"command": cmd, "inputs": in, "outputs": map[string]any{"o": nil}}
	}
	doc := map[string]any{"type": "pipeline", "settings": map[string]any{"default_compute": "cpu", "continue_on_step_failure": cont},
		"jobs": map[string]any{"a": step(), "b": step("a"), "c": step("a"), "d": step("b", "c"), "x": step()}}
	spec, err := decodePipeline(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	g, err := pipelinejob.NewPipelineGraph(spec)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestPipelineReady(t *testing.T) {
	g := diamond(t, false)
	if got, want := g.Order(), []string{"a", "b", "c", "d", "x"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Order = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		name   string
		cont   bool
		states map[string]string
		want   pipelinejob.PipelinePlan
	}{
		{"start", false, nil, pipelinejob.PipelinePlan{Start: []string{"a", "x"}}},
		{"running", false, map[string]string{"a": job.JobRunning, "x": job.JobQueued}, pipelinejob.PipelinePlan{}},
		{"a done", false, map[string]string{"a": job.JobCompleted, "x": job.JobRunning}, pipelinejob.PipelinePlan{Start: []string{"b", "c"}}},
		{"one of two", false, map[string]string{"a": job.JobCompleted, "b": job.JobCompleted, "c": job.JobRunning, "x": job.JobCompleted}, pipelinejob.PipelinePlan{}},
		{"join", false, map[string]string{"a": job.JobCompleted, "b": job.JobCompleted, "c": job.JobCompleted, "x": job.JobCompleted}, pipelinejob.PipelinePlan{Start: []string{"d"}}},
		{"all done", false, map[string]string{"a": job.JobCompleted, "b": job.JobCompleted, "c": job.JobCompleted, "d": job.JobCompleted, "x": job.JobCompleted},
			pipelinejob.PipelinePlan{Done: true, Status: job.JobCompleted}},
		{"failure stops", false, map[string]string{"a": job.JobCompleted, "b": job.JobFailed, "c": job.JobRunning, "x": job.JobRunning},
			pipelinejob.PipelinePlan{Skip: []string{"d"}, Cancel: []string{"c", "x"}}},
		{"failure stopped", false, map[string]string{"a": job.JobCompleted, "b": job.JobFailed, "c": job.JobCanceled, "x": job.JobCanceled},
			pipelinejob.PipelinePlan{Skip: []string{"d"}, Done: true, Status: job.JobFailed}},
		{"cancel requested is not canceled again", false, map[string]string{"a": job.JobFailed, "x": job.JobCancelRequested},
			pipelinejob.PipelinePlan{Skip: []string{"b", "c", "d"}}},
		{"failure before start", false, map[string]string{"a": job.JobFailed}, pipelinejob.PipelinePlan{Skip: []string{"b", "c", "d", "x"}, Done: true, Status: job.JobFailed}},
		{"continue: others go on", true, map[string]string{"a": job.JobFailed}, pipelinejob.PipelinePlan{Skip: []string{"b", "c", "d"}, Start: []string{"x"}}},
		{"continue: branch", true, map[string]string{"a": job.JobCompleted, "b": job.JobFailed, "c": job.JobRunning, "x": job.JobCompleted},
			pipelinejob.PipelinePlan{Skip: []string{"d"}}},
		{"continue: ends failed", true, map[string]string{"a": job.JobCompleted, "b": job.JobFailed, "c": job.JobCompleted, "x": job.JobCompleted},
			pipelinejob.PipelinePlan{Skip: []string{"d"}, Done: true, Status: job.JobFailed}},
		{"continue: canceled step", true, map[string]string{"a": job.JobCompleted, "b": job.JobCompleted, "c": job.JobCanceled, "x": job.JobCompleted},
			pipelinejob.PipelinePlan{Skip: []string{"d"}, Done: true, Status: job.JobCanceled}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := diamond(t, tc.cont)
			if got := g.Ready(tc.states); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Ready(%v) = %+v, want %+v", tc.states, got, tc.want)
			}
		})
	}
}

// fakeTx holds registered components; the other Tx methods are never
// called by ResolvePipelineComponents.
type fakeTx struct {
	store.Tx
	comps []*job.Component
}

func (f *fakeTx) GetAsset(kind asset.AssetKind, ws, name, version string) (asset.Asset, error) {
	for _, c := range f.comps {
		if c.Name == name && c.Version == version {
			return c, nil
		}
	}
	return nil, core.Errorf(core.ENOTFOUND, "component %s has no version %q", name, version)
}

func (f *fakeTx) LatestAsset(kind asset.AssetKind, ws, name string) (asset.Asset, error) {
	for i := len(f.comps) - 1; i >= 0; i-- {
		if c := f.comps[i]; c.Name == name && !c.Archived {
			return c, nil
		}
	}
	return nil, core.Errorf(core.ENOTFOUND, "component %s has no version", name)
}

func TestResolvePipelineComponents(t *testing.T) {
	raw, _ := json.Marshal(jobtest.TrainComponent())
	v1, err := job.DecodeComponent(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := job.NormalizeComponent(v1, true); err != nil {
		t.Fatal(err)
	}
	v2 := *v1
	v2.Version, v2.Command = "2", "python train2.py ${{inputs.training_data}} --epochs ${{inputs.max_epochs}} ${{outputs.model_output}}"
	tx := &fakeTx{comps: []*job.Component{v1, &v2}}

	for ref, wantCmd := range map[string]string{"azureml:train:1": "python train.py", "azureml:train@latest": "python train2.py"} {
		doc := jobtest.Set(threeSteps(), "jobs.train.component", ref)
		spec, err := decodePipeline(t, doc)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		if spec.Jobs["train"].Component != nil {
			t.Fatalf("%s: component filled before resolution", ref)
		}
		if err := pipelinejob.ResolvePipelineComponents(tx, "ws", spec); err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		g, _ := pipelinejob.NewPipelineGraph(spec)
		js, err := g.Resolve("train", pipelinejob.PipelineRun{Outputs: map[string]map[string]string{"prep": {"clean": "sha256:" + strings.Repeat("e", 64)}}})
		if err != nil || !strings.HasPrefix(js.Command, wantCmd) {
			t.Errorf("%s: train = %+v, %v; want command %q...", ref, js, err, wantCmd)
		}
	}
	spec, err := decodePipeline(t, jobtest.Set(threeSteps(), "jobs.train.component", "azureml:train:9"))
	if err != nil {
		t.Fatal(err)
	}
	err = pipelinejob.ResolvePipelineComponents(tx, "ws", spec)
	if core.ErrorField(err) != "jobs.train.component" || !strings.Contains(core.ErrorMessage(err), "azureml:train:9") {
		t.Errorf("a missing version: %v; want EINVALID on jobs.train.component", err)
	}
	// Once resolved, the component's types are checked against the
	// bindings: a literal where it wants a folder.
	spec, err = decodePipeline(t, jobtest.Set(jobtest.Set(threeSteps(), "jobs.train.component", "azureml:train:1"), "jobs.train.inputs.training_data", "x"))
	if err != nil {
		t.Fatalf("unresolved component: types cannot be checked yet, got %v", err)
	}
	err = pipelinejob.ResolvePipelineComponents(tx, "ws", spec)
	if core.ErrorField(err) != "jobs.train.inputs.training_data" {
		t.Errorf("a literal for a folder after resolution: %v; want an error naming jobs.train.inputs.training_data", err)
	}
}

func TestDecodeJobType(t *testing.T) {
	for doc, want := range map[string]string{`{"type":"Pipeline"}`: "pipeline", `{"command":"x"}`: "", `{"type":" command "}`: "command"} {
		if got, err := pipelinejob.DecodeJobType([]byte(doc)); err != nil || got != want {
			t.Errorf("DecodeJobType(%s) = %q, %v; want %q", doc, got, err, want)
		}
	}
	if _, err := pipelinejob.DecodeJobType([]byte(`[1]`)); core.ErrorCode(err) != core.EINVALID {
		t.Errorf("a list: %v, want EINVALID", err)
	}
}

// A pipeline's literal reaches a step as the component's type has it.
func TestPipelineLiteralTakesComponentType(t *testing.T) {
	spec, err := decodePipeline(t, jobtest.Set(threeSteps(), "inputs.epochs", "7"))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := pipelinejob.NewPipelineGraph(spec)
	js, err := g.Resolve("train", pipelinejob.PipelineRun{Outputs: map[string]map[string]string{"prep": {"clean": "sha256:" + strings.Repeat("b", 64)}}})
	if err != nil {
		t.Fatal(err)
	}
	if v := js.Inputs["max_epochs"].Value; v != json.Number("7") {
		t.Errorf("max_epochs = %#v, want the integer 7", v)
	}
}
