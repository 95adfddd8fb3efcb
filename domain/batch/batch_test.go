package batch

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// modelDeployment is Azure's model deployment shape (as in
// azureml-examples' mnist deployment), as JSON.
const modelDeployment = `{"$schema": "https://azuremlschemas.azureedge.net/latest/modelBatchDeployment.schema.json",
 "name": "mnist-torch-dpl", "endpoint_name": "mnist-batch", "type": "model",
 "model": {"name": "mnist", "version": 2},
 "code_configuration": {"code": "sha256:` + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" + `", "scoring_script": "batch_driver.py"},
 "environment": "azureml:torch:1", "compute": "azureml:batch-cluster",
 "resources": {"instance_count": 2},
 "settings": {"max_concurrency_per_instance": 2, "mini_batch_size": 10, "output_action": "append_row",
   "output_file_name": "out.csv", "retry_settings": {"max_retries": 3, "timeout": 30}, "error_threshold": -1, "logging_level": "info"}}`

func TestDecodeDeploymentAzureShape(t *testing.T) {
	d, err := DecodeDeployment([]byte(modelDeployment))
	if err != nil {
		t.Fatal(err)
	}
	if d.Model != "azureml:mnist:2" || d.Type != TypeModel || d.Settings.MiniBatchSize != "10" || d.Settings.LoggingLevel != "INFO" {
		t.Fatalf("decoded %+v", d)
	}
	if d.Settings.Retry == nil || *d.Settings.Retry.MaxRetries != 3 || d.Settings.Retry.Timeout != 30 || *d.Settings.ErrorThreshold != -1 {
		t.Fatalf("settings %+v", d.Settings)
	}
}

func TestDecodeDeploymentTopLevelSettingsAndDefaults(t *testing.T) {
	d, err := DecodeDeployment([]byte(`{"name": "dep1", "endpoint_name": "ep1", "model": "azureml:m@latest",
		"code_configuration": {"code": "azureml:code1:1", "scoring_script": "s.py"}, "compute": "c",
		"mini_batch_size": "10mb", "environment_variables": {"A": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if d.Settings.OutputAction != OutputAppendRow || d.Settings.OutputFileName != DefaultOutputFileName || d.Settings.MiniBatchSize != "10mb" || d.EnvironmentVariables["A"] != "1" {
		t.Fatalf("defaults %+v %+v", d.Settings, d.EnvironmentVariables)
	}
}

// Hostile and mistaken documents: each error names the field.
func TestDecodeDeploymentRefusals(t *testing.T) {
	base := func(extra string) string {
		return `{"name": "dep1", "endpoint_name": "ep1", "model": "azureml:m:1",
			"code_configuration": {"code": "azureml:c:1", "scoring_script": "s.py"}, "compute": "c"` + extra + `}`
	}
	for _, tc := range []struct{ doc, field string }{
		{`[1]`, ""},
		{base(`, "type": "pipeline"`), "type"},
		{base(`, "job_definition": {"a": 1}`), "type"},
		{base(`, "settings": {"mini_batch_size": "ten"}`), "settings.mini_batch_size"},
		{base(`, "settings": {"output_action": "everything"}`), "settings.output_action"},
		{base(`, "settings": {"output_file_name": "../x.csv"}`), "settings.output_file_name"},
		{base(`, "settings": {"error_threshold": -2}`), "settings.error_threshold"},
		{base(`, "settings": {"max_concurrency_per_instance": 0}`), "settings.max_concurrency_per_instance"},
		{base(`, "settings": {"logging_level": "loud"}`), "settings.logging_level"},
		{base(`, "settings": {"retry_settings": {"max_retries": -1}}`), "settings.retry_settings.max_retries"},
		{base(`, "settings": {"retry_settings": {"tries": 1}}`), "settings.retry_settings.tries"},
		{base(`, "settings": {"mini_batch_sise": 1}`), "settings.mini_batch_sise"},
		{base(`, "scoring": 1`), "scoring"},
		{strings.Replace(base(""), `"s.py"`, `"../../etc/passwd"`, 1), "code_configuration.scoring_script"},
		{strings.Replace(base(""), `"s.py"`, `"/etc/passwd"`, 1), "code_configuration.scoring_script"},
		{strings.Replace(base(""), `"azureml:m:1"`, `{"name": "m", "path": "./model"}`, 1), "model.path"},
		{strings.Replace(base(""), `"azureml:m:1"`, `"./model"`, 1), "model"},
		{strings.Replace(base(""), `"dep1"`, `"d"`, 1), "name"},
		{strings.Replace(base(""), `"ep1"`, `"ep 1"`, 1), "endpoint_name"},
		{strings.Replace(base(""), `"compute": "c"`, `"compute": ""`, 1), "compute"},
	} {
		_, err := DecodeDeployment([]byte(tc.doc))
		if err == nil {
			t.Errorf("%s: accepted", tc.doc)
			continue
		}
		var e *core.Error
		if ce, ok := err.(*core.Error); ok {
			e = ce
		}
		if e == nil || e.Code != core.EINVALID || e.Field != tc.field {
			t.Errorf("%s: got %v (field %q), want an EINVALID naming %q", tc.doc, err, e.Field, tc.field)
		}
	}
}

func TestDecodeEndpoint(t *testing.T) {
	e, err := DecodeEndpoint([]byte(`{"$schema": "x", "name": "mnist-batch", "description": "d", "tags": {"a": "b"}, "auth_mode": "aad_token", "defaults": {"deployment_name": "dep1"}, "scoring_uri": "ignored"}`))
	if err != nil {
		t.Fatal(err)
	}
	if e.DefaultDeployment() != "dep1" || e.AuthMode != "aad_token" {
		t.Fatalf("%+v", e)
	}
	for doc, field := range map[string]string{
		`{"name": "ep1", "auth_mode": "key"}`:                     "auth_mode",
		`{"name": "-ep"}`:                                         "name",
		`{"name": "ep1", "defaults": {"deployment": "x"}}`:        "defaults.deployment",
		`{"name": "ep1", "defaults": {"deployment_name": "a b"}}`: "defaults.deployment_name",
	} {
		_, err := DecodeEndpoint([]byte(doc))
		if ce, ok := err.(*core.Error); !ok || ce.Field != field {
			t.Errorf("%s: got %v, want an error naming %s", doc, err, field)
		}
	}
}

func TestInvocationJob(t *testing.T) {
	d, err := DecodeDeployment([]byte(modelDeployment))
	if err != nil {
		t.Fatal(err)
	}
	ep := &Endpoint{Name: "mnist-batch"}
	inv := &Invocation{Input: Input{Path: "azureml:digits@latest"}}
	if err := ValidateInput(&inv.Input); err != nil {
		t.Fatal(err)
	}
	spec := InvocationJob(ep, d, inv)
	p := spec.Parallel
	if p == nil || p.InputData != "${{inputs.input_data}}" || p.ModelInput != "model" || p.AppendRowTo != "${{outputs.score}}" ||
		p.AppendRowFile != "out.csv" || p.EntryScript != "batch_driver.py" || p.Concurrency() != 2 || p.TimeoutSeconds() != 30 {
		t.Fatalf("parallel %+v", p)
	}
	if spec.Inputs["input_data"].Type != "uri_folder" || spec.Inputs["model"].Path != "azureml:mnist:2" || spec.Outputs["score"].Type != "uri_folder" {
		t.Fatalf("io %+v %+v", spec.Inputs, spec.Outputs)
	}
	if spec.Command != job.ParallelCommand("") || spec.Tags[TagEndpoint] != "mnist-batch" || spec.Tags[TagDeployment] != "mnist-torch-dpl" || spec.InstanceCount() != 2 {
		t.Fatalf("spec %+v", spec)
	}
	if err := job.NormalizeJobSpec(spec); err != nil {
		t.Fatalf("the invocation's job is not a valid job: %v", err)
	}
	d.Settings.OutputAction = OutputSummaryOnly
	if p := InvocationJob(ep, d, inv).Parallel; p.AppendRowTo != "" || p.AppendRowFile != "" {
		t.Fatalf("summary_only keeps rows: %+v", p)
	}
}

func TestValidateInput(t *testing.T) {
	for _, in := range []Input{{Path: ""}, {Path: "./local"}, {Path: "/etc"}, {Path: "azureml:x@latest", Type: "folder"}} {
		in := in
		if err := ValidateInput(&in); err == nil {
			t.Errorf("%+v accepted", in)
		}
	}
	in := Input{Path: "azureml://datastores/workspaceblobstore/paths/x/", Type: "MLTable"}
	if err := ValidateInput(&in); err != nil || in.Type != "mltable" {
		t.Fatalf("%v %+v", err, in)
	}
}
