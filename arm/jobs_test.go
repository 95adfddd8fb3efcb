package arm_test

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/arm"
	"github.com/shoal-ml/shoal/arm/armjob"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
)

// The bodies in testdata/jobs are what azure-ai-ml 1.4.0's
// to_rest_job_object serializes for a command(), a .sweep() and a
// @dsl.pipeline (generated with Debian's python3-azure).
func golden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/jobs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func translate(t *testing.T, body []byte, codes arm.CodeResolver) []byte {
	t.Helper()
	doc, err := armjob.JobDocument(context.Background(), "default", "j1", body, codes)
	if err != nil {
		t.Fatalf("JobDocument: %v", err)
	}
	return doc
}

// TestJobDocumentCommand: the SDK's CommandJob becomes the command job
// document `shoal job create` sends: ARM ids of the workspace's compute
// and environment become names, REST modes the YAML's, literals stay
// strings, the SDK's empty properties are not asked for.
func TestJobDocumentCommand(t *testing.T) {
	doc := translate(t, golden(t, "command.json"), nil)
	spec, err := job.DecodeJobSpec(doc)
	if err != nil {
		t.Fatalf("decode %s: %v", doc, err)
	}
	if err := job.NormalizeJobSpec(spec); err != nil {
		t.Fatalf("normalize %s: %v", doc, err)
	}
	if spec.Name != "j1" || spec.Compute != "cpu" || spec.Environment != "azureml:CliV2AnonymousEnvironment:0123456789abcdef0123456789abcdef" ||
		spec.DisplayName != "hello" || spec.ExperimentName != "exp" || spec.Tags["team"] != "ml" || spec.EnvironmentVariables["X"] != "1" {
		t.Errorf("spec: %+v", spec)
	}
	if spec.Resources == nil || spec.Resources.InstanceCount != 2 || spec.Distribution == nil || spec.Distribution.Type != "pytorch" ||
		spec.Distribution.ProcessCountPerInstance != 2 || spec.Limits == nil || spec.Limits.Timeout != 300 {
		t.Errorf("resources %+v distribution %+v limits %+v", spec.Resources, spec.Distribution, spec.Limits)
	}
	if in := spec.Inputs["data"]; in == nil || in.Type != "uri_folder" || in.Path != "azureml://datastores/workspaceblobstore/paths/x/" || in.Mode != "download" {
		t.Errorf("input data: %+v", in)
	}
	if in := spec.Inputs["n"]; in == nil || in.Value == nil || in.Type != "" {
		t.Errorf("input n: %+v", in)
	}
	if o := spec.Outputs["out"]; o == nil || o.Mode != "upload" {
		t.Errorf("output out: %+v", o)
	}
}

// TestJobDocumentSweep: HyperDrive's [type, [args]] search space and the
// REST enums become the sweep document's.
func TestJobDocumentSweep(t *testing.T) {
	doc := translate(t, golden(t, "sweep.json"), nil)
	if typ, err := pipelinejob.DecodeJobType(doc); err != nil || typ != job.JobTypeSweep {
		t.Fatalf("type %q %v", typ, err)
	}
	spec, err := sweepjob.DecodeSweepSpec(doc)
	if err != nil {
		t.Fatalf("decode %s: %v", doc, err)
	}
	if err := sweepjob.NormalizeSweepSpec(spec); err != nil {
		t.Fatalf("normalize %s: %v", doc, err)
	}
	if spec.Compute != "cpu" || spec.Trial.Environment != "azureml:sdk-env:1" || !strings.Contains(spec.Trial.Command, "${{search_space.lr}}") {
		t.Errorf("spec %+v trial %+v", spec, spec.Trial)
	}
	lr, k, b := spec.SearchSpace["lr"], spec.SearchSpace["k"], spec.SearchSpace["b"]
	if lr == nil || lr.Type != "uniform" || *lr.MinValue != 0.01 || *lr.MaxValue != 0.1 || k == nil || len(k.Values) != 3 || b == nil || *b.Upper != 5 {
		t.Errorf("search space %s", doc)
	}
	if spec.SamplingAlgorithm.Type != "random" || spec.Objective.Goal != "maximize" || spec.Objective.PrimaryMetric != "acc" {
		t.Errorf("sampling %+v objective %+v", spec.SamplingAlgorithm, spec.Objective)
	}
	if l := spec.Limits; l.MaxTotalTrials != 4 || l.MaxConcurrentTrials != 2 || l.Timeout != 600 {
		t.Errorf("limits %+v", l)
	}
	if e := spec.EarlyTermination; e == nil || e.Type != "bandit" || *e.SlackFactor != 0.1 || e.EvaluationInterval != 1 {
		t.Errorf("early termination %+v", e)
	}
}

// TestJobDocumentPipeline: a @dsl.pipeline's steps name their
// components by ARM id; bindings stay bindings.
func TestJobDocumentPipeline(t *testing.T) {
	doc := translate(t, golden(t, "pipeline.json"), nil)
	spec, err := pipelinejob.DecodePipelineSpec(doc)
	if err != nil {
		t.Fatalf("decode %s: %v", doc, err)
	}
	if spec.Compute != "cpu" || spec.ExperimentName != "pipes" || spec.Description != "two steps" {
		t.Errorf("spec %+v", spec)
	}
	a, b := spec.Jobs["a"], spec.Jobs["b"]
	if a == nil || b == nil || a.ComponentRef != "azureml:prep:1" || b.ComponentRef != "azureml:train:1" {
		t.Fatalf("steps %s", doc)
	}
	if b.Inputs["data"] == nil || b.Inputs["data"].Bind != "${{parent.jobs.a.outputs.out}}" || b.Inputs["k"].Bind != "${{parent.inputs.k}}" {
		t.Errorf("step b inputs %s", doc)
	}
	if a.Outputs["out"] == nil || a.Outputs["out"].Bind != "${{parent.outputs.final}}" {
		t.Errorf("step a outputs %s", doc)
	}
	if spec.Inputs["k"] == nil || spec.Outputs["final"] == nil {
		t.Errorf("pipeline inputs/outputs %s", doc)
	}
}

// fakeCodes stands in for the code assets (another part's package) at
// this edge: it knows one code version.
type fakeCodes struct{}

func (fakeCodes) CodeArtifact(_ context.Context, ws, id string) (string, error) {
	if ws == "default" && strings.HasSuffix(id, "/codes/src/versions/1") {
		return "sha256:" + strings.Repeat("ab", 32), nil
	}
	return "", core.Errorf(core.ENOTFOUND, "code %q not found in workspace %q", id, ws)
}

// TestJobDocumentCode: codeId goes through the CodeResolver; a code
// version it does not know is 404 naming properties.codeId; without one
// a job naming code is refused saying so.
func TestJobDocumentCode(t *testing.T) {
	body := func(code string) []byte {
		return []byte(`{"properties":{"jobType":"Command","command":"python x.py","computeId":"cpu","environmentId":"azureml:e:1","codeId":"` + code + `"}}`)
	}
	const ws = "azureml:/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default"
	doc := translate(t, body(ws+"/codes/src/versions/1"), fakeCodes{})
	spec, err := job.DecodeJobSpec(doc)
	if err != nil || spec.Code != "sha256:"+strings.Repeat("ab", 32) || spec.CodeAsset != "src:1" {
		t.Fatalf("code %q (from %q) %v", spec.Code, spec.CodeAsset, err)
	}
	// Read back, the job names the code version it was sent with (the
	// SDK resolves that id), never the artifact Shoal packed.
	b, _ := json.Marshal(armjob.ToJobResource(arm.Scope{Subscription: "s", ResourceGroup: "rg"}, "https://shoal.example", decodeJob(t, doc)))
	if want := `"codeId":"/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/codes/src/versions/1"`; !strings.Contains(string(b), want) {
		t.Errorf("read back: %s\nwant %s", b, want)
	}
	_, err = armjob.JobDocument(context.Background(), "default", "j", body(ws+"/codes/src/versions/9"), fakeCodes{})
	if core.ErrorCode(err) != core.ENOTFOUND || core.ErrorField(err) != "properties.codeId" {
		t.Errorf("unknown code: %v (field %q)", err, core.ErrorField(err))
	}
	_, err = armjob.JobDocument(context.Background(), "default", "j", body(ws+"/codes/src/versions/1"), nil)
	if core.ErrorCode(err) != core.ENOTIMPLEMENTED || !strings.Contains(err.Error(), "properties.codeId") {
		t.Errorf("no resolver: %v", err)
	}
}

// TestJobDocumentRefusals: hostile and unsupported bodies are refused
// naming the field, with a sentence for the job kinds Shoal does not run.
func TestJobDocumentRefusals(t *testing.T) {
	other := "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/other"
	for body, want := range map[string]string{
		`{"properties":{"jobType":"Teleport","command":"x"}}`:                                                                         "properties.jobType",
		`{"properties":{"command":"x"}}`:                                                                                              "properties.jobType",
		`{"properties":{"jobType":"Command","command":"x","computeId":"` + other + `/computes/cpu"}}`:                                 "properties.computeId",
		`{"properties":{"jobType":"Command","command":"x","environmentId":"` + other + `/environments/e/versions/1"}}`:                "properties.environmentId",
		`{"properties":{"jobType":"Command","command":"x","computeId":"/subscriptions/s/whatever"}}`:                                  "properties.computeId",
		`{"properties":{"jobType":"Command","command":"x","teleport":true}}`:                                                          "properties.teleport",
		`{"properties":{"jobType":"Command","command":"x","inputs":{"a":{"jobInputType":"uri_file","uri":"x","mode":"Teleport"}}}}`:   "properties.inputs.a.mode",
		`{"properties":{"jobType":"Command","command":"x","inputs":{"a":{"jobInputType":"literal"}}}}`:                                "properties.inputs.a.value",
		`{"properties":{"jobType":"Command","command":"x","distribution":{"distributionType":"Ray"}}}`:                                "properties.distribution.distributionType",
		`{"properties":{"jobType":"Command","command":"x","isArchived":true}}`:                                                        "properties.isArchived",
		`{"properties":{"jobType":"Command","command":"x","identity":{"identityType":"Root"}}}`:                                       "properties.identity.identityType",
		`{"properties":{"jobType":"Sweep","searchSpace":{"lr":["gaussian",[1,2]]}}}`:                                                  "properties.searchSpace.lr[0]",
		`{"properties":{"jobType":"Sweep","searchSpace":{"lr":["uniform",[1]]}}}`:                                                     "properties.searchSpace.lr[1]",
		`{"properties":{"jobType":"Sweep","searchSpace":{"lr":"uniform"}}}`:                                                           "properties.searchSpace.lr",
		`{"properties":{"jobType":"Pipeline","jobs":{"s":{"type":"data_transfer"}}}}`:                                                 "properties.jobs.s.type",
		`{"properties":{"jobType":"Pipeline","jobs":{"s":{"type":"command","componentId":"` + other + `/components/c/versions/1"}}}}`: "properties.jobs.s.componentId",
		`{"properties":{"jobType":"Pipeline","jobs":{"s":{"type":"command","componentId":"inline:p/s"}}}}`:                            "properties.jobs.s.componentId",
		`{"properties":[]}`: "body",
		`{}`:                "properties",
	} {
		_, err := armjob.JobDocument(context.Background(), "default", "j", []byte(body), nil)
		if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != want {
			t.Errorf("%s: %v (field %q), want EINVALID on %s", body, err, core.ErrorField(err), want)
		}
	}
	for typ, says := range map[string]string{"AutoML": "sweep job", "Spark": "command job", "FineTuning": "command job"} {
		_, err := armjob.JobDocument(context.Background(), "default", "j", []byte(`{"properties":{"jobType":"`+typ+`"}}`), nil)
		if core.ErrorField(err) != "properties.jobType" || !strings.Contains(err.Error(), "not run by Shoal") || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v", typ, err)
		}
	}
}

// TestJobResourceRoundTrip: a job read back as Azure's resource and PUT
// again (what the SDK does when it updates a job) decodes to the same
// job; services are never null.
func TestJobResourceRoundTrip(t *testing.T) {
	scope := arm.Scope{Subscription: "s", ResourceGroup: "rg"}
	for _, name := range []string{"command.json", "sweep.json", "pipeline.json", "pipeline_sweep.json"} {
		doc := translate(t, golden(t, name), nil)
		j := decodeJob(t, doc)
		res := armjob.ToJobResource(scope, "https://shoal.example", j)
		b, _ := json.Marshal(res)
		var back map[string]any
		json.Unmarshal(b, &back)
		p := back["properties"].(map[string]any)
		svc, _ := p["services"].(map[string]any)
		if studio, _ := svc["Studio"].(map[string]any); studio["endpoint"] != "https://shoal.example/jobs/j1?workspace=default" || studio["jobServiceType"] != "Studio" {
			t.Errorf("%s: services %v", name, p["services"])
		}
		if p["status"] != "Running" || back["id"] != "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/jobs/j1" {
			t.Errorf("%s: %v", name, back)
		}
		again, err := armjob.JobDocument(context.Background(), "default", "j1", b, nil)
		if err != nil {
			t.Fatalf("%s: PUT back: %v\n%s", name, err, b)
		}
		if j2 := decodeJob(t, again); !reflect.DeepEqual(j, j2) {
			t.Errorf("%s: round trip differs:\n%s\n%s", name, doc, again)
		}
	}
}

// decodeJob decodes a job document as the submit path does, into the job
// it stores (the parts ToJobResource reads).
func decodeJob(t *testing.T, doc []byte) *job.Job {
	t.Helper()
	j := &job.Job{Workspace: "default", Status: job.JobRunning, CreatedOn: time.Unix(0, 0)}
	switch typ, _ := pipelinejob.DecodeJobType(doc); typ {
	case job.JobTypeSweep:
		s, err := sweepjob.DecodeSweepSpec(doc)
		if err != nil {
			t.Fatal(err)
		}
		j.JobSpec = job.JobSpec{Name: s.Name, Type: job.JobTypeSweep, DisplayName: s.DisplayName, ExperimentName: s.ExperimentName, Description: s.Description, Tags: s.Tags}
		j.Sweep = s
	case job.JobTypePipeline:
		p, err := pipelinejob.DecodePipelineSpec(doc)
		if err != nil {
			t.Fatal(err)
		}
		j.JobSpec = job.JobSpec{Name: p.Name, Type: job.JobTypePipeline, DisplayName: p.DisplayName, ExperimentName: p.ExperimentName, Description: p.Description, Tags: p.Tags}
		j.Pipeline = p
	default:
		s, err := job.DecodeJobSpec(doc)
		if err != nil {
			t.Fatal(err)
		}
		j.JobSpec = *s
	}
	return j
}

// TestSweepResourceNamesItsBestTrial: azure-ai-ml's jobs.download of a
// sweep downloads the trial named by properties.best_child_run_id; a
// sweep without a best trial yet names none, and the answer is still a
// body the SDK can PUT back.
func TestSweepResourceNamesItsBestTrial(t *testing.T) {
	scope := arm.Scope{Subscription: "s", ResourceGroup: "rg"}
	j := decodeJob(t, translate(t, golden(t, "sweep.json"), nil))
	props := func() map[string]any {
		b, _ := json.Marshal(armjob.ToJobResource(scope, "https://shoal.example", j))
		if _, err := armjob.JobDocument(context.Background(), "default", "j1", b, nil); err != nil {
			t.Fatalf("PUT back: %v", err)
		}
		var back map[string]any
		json.Unmarshal(b, &back)
		p, _ := back["properties"].(map[string]any)["properties"].(map[string]any)
		return p
	}
	if p := props(); len(p) != 0 {
		t.Errorf("a sweep without a best trial: properties %v, want none", p)
	}
	j.BestChildRunID = "j1-trial-3"
	if p := props(); p["best_child_run_id"] != "j1-trial-3" {
		t.Errorf("properties %v, want best_child_run_id j1-trial-3", p)
	}
}
