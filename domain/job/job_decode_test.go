package job_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/domain/job"
)

// azureCommandJob is the Azure ML docs' command job, as the CLI sends it
// (YAML converted to JSON).
const azureCommandJob = `{
  "$schema": "https://azuremlschemas.azureedge.net/latest/commandJob.schema.json",
  "code": "src",
  "command": "python main.py --data ${{inputs.data}} --lr ${{inputs.learning_rate}} --out ${{outputs.model}}",
  "environment": "azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest",
  "compute": "azureml:cpu-cluster",
  "display_name": "sklearn-train",
  "experiment_name": "train-sklearn",
  "description": "Train a scikit-learn model on the iris data",
  "inputs": {
    "data": {"type": "uri_folder", "path": "./data"},
    "learning_rate": 0.01
  },
  "outputs": {"model": {"type": "uri_folder"}},
  "distribution": {"type": "pytorch", "process_count_per_instance": 2},
  "resources": {"instance_count": 2},
  "limits": {"timeout": 3600},
  "queue_settings": {"priority": "high"}
}`

// azureJobExamples are more command jobs in the shapes the Azure ML docs
// and examples repository use.
var azureJobExamples = map[string]string{
	"hello world": `{"$schema": "https://azuremlschemas.azureedge.net/latest/commandJob.schema.json", "command": "echo \"hello world\"", "environment": {"image": "library/python:latest"}, "compute": "azureml:cpu-cluster"}`,
	"pytorch cifar": `{"$schema": "https://azuremlschemas.azureedge.net/latest/commandJob.schema.json",
	  "code": "src",
	  "command": "python train.py --data-dir ${{inputs.cifar}} --epochs ${{inputs.epoch}} --batch-size ${{inputs.batchsize}} --workers ${{inputs.workers}} --learning-rate ${{inputs.lr}} --momentum ${{inputs.momen}} --print-freq ${{inputs.prtfreq}} --model-dir ${{inputs.output}}",
	  "inputs": {"cifar": {"type": "uri_folder", "path": "azureml:cifar-10-example@latest"}, "epoch": 10, "batchsize": 64, "workers": 2, "lr": 0.01, "momen": 0.9, "prtfreq": 200, "output": "./outputs"},
	  "environment": "azureml:AzureML-acpt-pytorch-2.2-cuda12.1@latest",
	  "compute": "azureml:gpu-cluster",
	  "distribution": {"type": "pytorch", "process_count_per_instance": 1},
	  "resources": {"instance_count": 2},
	  "display_name": "pytorch-cifar-distributed-example",
	  "experiment_name": "pytorch-cifar-distributed-example",
	  "description": "Train a basic convolutional neural network (CNN) with PyTorch on the CIFAR-10 dataset, distributed via PyTorch."}`,
	"mpi":          `{"code": "src", "command": "python train.py --epochs ${{inputs.epochs}}", "inputs": {"epochs": 1}, "environment": {"image": "mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04", "conda_file": "./conda.yml"}, "compute": "azureml:cpu-cluster", "resources": {"instance_count": 2, "shm_size": "8g"}, "distribution": {"type": "mpi", "process_count_per_instance": 1}}`,
	"tensorflow":   `{"code": "src", "command": "python train.py --epochs ${{inputs.epochs}} --model-dir ${{outputs.trained_model}}", "inputs": {"epochs": 1}, "outputs": {"trained_model": null}, "environment": "azureml:AzureML-tensorflow-2.12-cuda11@latest", "compute": "azureml:gpu-cluster", "resources": {"instance_count": 2}, "distribution": {"type": "tensorflow"}}`,
	"docker build": `{"command": "python hello.py", "code": ".", "environment": {"build": {"path": "./docker-context"}}, "compute": "azureml:cpu-cluster", "environment_variables": {"EXAMPLE_ENV_VAR": "EXAMPLE_VALUE", "WORKERS": 4, "DEBUG": false}, "tags": {"team": "ml", "cost_center": 1234}}`,
	"iris file":    `{"command": "python main.py --iris-csv ${{inputs.iris_csv}} --C ${{inputs.C}} --kernel ${{inputs.kernel}} --coef0 ${{inputs.coef0}}", "code": "src", "inputs": {"iris_csv": {"type": "uri_file", "path": "https://azuremlexamples.blob.core.windows.net/datasets/iris.csv", "mode": "download"}, "C": 0.8, "kernel": "rbf", "coef0": 0.1}, "environment": "azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest", "compute": "azureml:cpu-cluster", "display_name": "sklearn-iris-example", "experiment_name": "sklearn-iris-example", "limits": {"timeout": "PT2H"}, "queue_settings": {"job_tier": "Standard", "priority": "Low"}}`,
	"show output applied again": `{"name": "keen_shark_3v8k2qm1xz", "type": "command", "command": "python train.py", "compute": "cpu-cluster", "retries": 2,
	  "id": "/subscriptions/x/jobs/keen_shark_3v8k2qm1xz", "status": "Completed", "status_reason": "", "created_by": "alice", "created_on": "2024-01-01T00:00:00Z",
	  "start_time": "2024-01-01T00:01:00Z", "end_time": "2024-01-01T00:02:00Z", "attempt_count": 1, "current_attempt_id": "a1", "failed_attempts": 0,
	  "infra_requeues": 0, "exit_code": 0, "error": "", "creation_context": {"created_by": "alice"}, "properties": {"x": "y"}, "services": null, "identity": null}`,
}

func decodeJob(t *testing.T, doc string) *job.JobSpec {
	t.Helper()
	spec, err := job.DecodeJobSpec([]byte(doc))
	if err != nil {
		t.Fatalf("DecodeJobSpec: %v", err)
	}
	return spec
}

func TestDecodeJobSpecAzureExample(t *testing.T) {
	spec := decodeJob(t, azureCommandJob)
	want := &job.JobSpec{
		Type:           "",
		DisplayName:    "sklearn-train",
		ExperimentName: "train-sklearn",
		Description:    "Train a scikit-learn model on the iris data",
		Command:        "python main.py --data ${{inputs.data}} --lr ${{inputs.learning_rate}} --out ${{outputs.model}}",
		Code:           "src",
		Environment:    "azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest",
		Compute:        "azureml:cpu-cluster",
		Inputs: map[string]*job.JobInput{
			"data":          {Type: "uri_folder", Path: "./data"},
			"learning_rate": {Value: json.Number("0.01")},
		},
		Outputs:       map[string]*job.JobOutput{"model": {Type: "uri_folder"}},
		Resources:     &job.JobResources{InstanceCount: 2},
		Distribution:  &job.Distribution{Type: "pytorch", ProcessCountPerInstance: 2},
		Limits:        &job.JobLimits{Timeout: 3600},
		QueueSettings: &job.QueueSettings{Priority: "high"},
	}
	if !reflect.DeepEqual(spec, want) {
		got, _ := json.Marshal(spec)
		exp, _ := json.Marshal(want)
		t.Fatalf("decoded\n%s\nwant\n%s", got, exp)
	}
}

func TestDecodeJobSpecAzureExamplesNormalize(t *testing.T) {
	for name, doc := range azureJobExamples {
		t.Run(name, func(t *testing.T) {
			spec := decodeJob(t, doc)
			if err := job.NormalizeJobSpec(spec); err != nil {
				t.Fatalf("NormalizeJobSpec: %v", err)
			}
			if spec.Type != "command" || strings.HasPrefix(spec.Compute, "azureml:") {
				t.Fatalf("not normalised: type %q compute %q", spec.Type, spec.Compute)
			}
		})
	}
}

func TestDecodeJobSpecValues(t *testing.T) {
	base := `"command": "run", "compute": "cpu-cluster"`
	doc := func(extra string) string {
		if extra == "" {
			return "{" + base + "}"
		}
		return "{" + base + ", " + extra + "}"
	}
	tests := []struct {
		name  string
		extra string
		check func(t *testing.T, s *job.JobSpec)
	}{
		{"minimal", ``, func(t *testing.T, s *job.JobSpec) {
			if s.Command != "run" || s.Compute != "cpu-cluster" || s.Inputs != nil || s.Resources != nil {
				t.Errorf("got %+v", s)
			}
		}},
		{"schema and read-only keys ignored", `"$schema": "x", "id": "j", "status": "Running", "status_reason": "r", "created_by": "a", "created_on": "t", "start_time": "t", "end_time": "t", "attempt_count": 2, "current_attempt_id": "a", "failed_attempts": 1, "infra_requeues": 1, "exit_code": 1, "error": "e", "creation_context": {}, "properties": {}`, func(t *testing.T, s *job.JobSpec) {
			if s.Command != "run" {
				t.Errorf("got %+v", s)
			}
		}},
		{"null services and identity", `"services": null, "identity": null`, nil},
		{"type Command kept for normalize", `"type": "Command"`, func(t *testing.T, s *job.JobSpec) {
			if s.Type != "Command" {
				t.Errorf("type %q", s.Type)
			}
		}},
		{"name as a number", `"name": 2024, "experiment_name": 7, "display_name": true`, func(t *testing.T, s *job.JobSpec) {
			if s.Name != "2024" || s.ExperimentName != "7" || s.DisplayName != "true" {
				t.Errorf("got %q %q %q", s.Name, s.ExperimentName, s.DisplayName)
			}
		}},
		{"nulls are absent", `"name": null, "inputs": null, "outputs": null, "resources": null, "distribution": null, "limits": null, "queue_settings": null, "retries": null, "environment": null, "tags": null, "environment_variables": null`, func(t *testing.T, s *job.JobSpec) {
			if s.Inputs != nil || s.Outputs != nil || s.Resources != nil || s.Distribution != nil || s.Limits != nil || s.QueueSettings != nil || s.Retries != nil || s.Environment != nil {
				t.Errorf("got %+v", s)
			}
		}},
		{"tags of numbers and booleans", `"tags": {"cost_center": 1234, "prod": true, "team": "ml"}`, func(t *testing.T, s *job.JobSpec) {
			if !reflect.DeepEqual(s.Tags, map[string]string{"cost_center": "1234", "prod": "true", "team": "ml"}) {
				t.Errorf("tags %v", s.Tags)
			}
		}},
		{"environment reference", `"environment": "azureml:my-env:1"`, func(t *testing.T, s *job.JobSpec) {
			if s.Environment != "azureml:my-env:1" {
				t.Errorf("environment %#v", s.Environment)
			}
		}},
		{"inline environment kept as is", `"environment": {"image": "python:3.11", "conda_file": "conda.yml", "build": {"path": "ctx"}, "os_type": "linux", "n": 3}`, func(t *testing.T, s *job.JobSpec) {
			want := map[string]any{"image": "python:3.11", "conda_file": "conda.yml", "build": map[string]any{"path": "ctx"}, "os_type": "linux", "n": json.Number("3")}
			if !reflect.DeepEqual(s.Environment, want) {
				t.Errorf("environment %#v", s.Environment)
			}
		}},
		{"environment variables become strings", `"environment_variables": {"A": "x", "N": 4, "F": 0.5, "B": false, "E": null, "BIG": 1.0}`, func(t *testing.T, s *job.JobSpec) {
			want := map[string]string{"A": "x", "N": "4", "F": "0.5", "B": "false", "E": "", "BIG": "1"}
			if !reflect.DeepEqual(s.EnvironmentVariables, want) {
				t.Errorf("environment_variables %v", s.EnvironmentVariables)
			}
		}},
		{"literal inputs keep numbers", `"inputs": {"lr": 0.01, "epochs": 10, "big": 12345678901234567890, "kernel": "rbf", "flag": true, "empty": ""}`, func(t *testing.T, s *job.JobSpec) {
			want := map[string]*job.JobInput{
				"lr": {Value: json.Number("0.01")}, "epochs": {Value: json.Number("10")}, "big": {Value: json.Number("12345678901234567890")},
				"kernel": {Value: "rbf"}, "flag": {Value: true}, "empty": {Value: ""},
			}
			if !reflect.DeepEqual(s.Inputs, want) {
				t.Errorf("inputs %s", mustJSON(s.Inputs))
			}
		}},
		{"path inputs", `"inputs": {"a": {"path": "./data"}, "b": {"type": "URI_FILE", "path": "https://x/iris.csv", "mode": "download"}, "c": {"type": "uri_folder", "path": "azureml:cifar@latest", "mode": "ro_mount"}}`, func(t *testing.T, s *job.JobSpec) {
			want := map[string]*job.JobInput{
				"a": {Type: "uri_folder", Path: "./data"},
				"b": {Type: "uri_file", Path: "https://x/iris.csv", Mode: "download"},
				"c": {Type: "uri_folder", Path: "azureml:cifar@latest", Mode: "ro_mount"},
			}
			if !reflect.DeepEqual(s.Inputs, want) {
				t.Errorf("inputs %s", mustJSON(s.Inputs))
			}
		}},
		{"typed literal inputs", `"inputs": {"i": {"type": "integer", "default": 5}, "i2": {"type": "integer", "default": "7"}, "i3": {"type": "integer", "value": 3.0}, "n": {"type": "number", "default": "0.5"}, "n2": {"type": "Number", "default": 2}, "s": {"type": "string", "default": 5}, "b": {"type": "boolean", "default": "True"}, "b2": {"type": "boolean", "value": false}, "v": {"value": 3}}`, func(t *testing.T, s *job.JobSpec) {
			want := map[string]*job.JobInput{
				"i": {Value: json.Number("5")}, "i2": {Value: json.Number("7")}, "i3": {Value: json.Number("3")},
				"n": {Value: json.Number("0.5")}, "n2": {Value: json.Number("2")}, "s": {Value: "5"},
				"b": {Value: true}, "b2": {Value: false}, "v": {Value: json.Number("3")},
			}
			if !reflect.DeepEqual(s.Inputs, want) {
				t.Errorf("inputs %s", mustJSON(s.Inputs))
			}
		}},
		{"outputs default to uri_folder", `"outputs": {"model": null, "metrics": {}, "report": {"type": "Uri_File", "mode": "upload", "path": "azureml://datastores/workspaceblobstore/paths/r.json"}}`, func(t *testing.T, s *job.JobSpec) {
			want := map[string]*job.JobOutput{
				"model": {Type: "uri_folder"}, "metrics": {Type: "uri_folder"},
				"report": {Type: "uri_file", Mode: "upload", Path: "azureml://datastores/workspaceblobstore/paths/r.json"},
			}
			if !reflect.DeepEqual(s.Outputs, want) {
				t.Errorf("outputs %s", mustJSON(s.Outputs))
			}
		}},
		{"resources", `"resources": {"instance_count": 4.0, "instance_type": "gpu", "shm_size": "8g", "properties": {"a": 1}}`, func(t *testing.T, s *job.JobSpec) {
			if !reflect.DeepEqual(s.Resources, &job.JobResources{InstanceCount: 4, InstanceType: "gpu", ShmSize: "8g"}) {
				t.Errorf("resources %+v", s.Resources)
			}
		}},
		{"shm_size as a number", `"resources": {"shm_size": 1024}`, func(t *testing.T, s *job.JobSpec) {
			if s.Resources.ShmSize != "1024" {
				t.Errorf("shm_size %q", s.Resources.ShmSize)
			}
		}},
		{"empty resources", `"resources": {}`, func(t *testing.T, s *job.JobSpec) {
			if s.Resources == nil || s.Resources.InstanceCount != 0 {
				t.Errorf("resources %+v", s.Resources)
			}
		}},
		{"timeout in seconds", `"limits": {"timeout": 3600}`, wantTimeout(3600)},
		{"timeout as digits", `"limits": {"timeout": "7200"}`, wantTimeout(7200)},
		{"timeout ISO 8601", `"limits": {"timeout": "PT1H"}`, wantTimeout(3600)},
		{"timeout ISO 8601 minutes", `"limits": {"timeout": "PT1H30M"}`, wantTimeout(5400)},
		{"timeout null", `"limits": {"timeout": null}`, wantTimeout(0)},
		{"queue settings", `"queue_settings": {"job_tier": "Spot", "priority": "Low"}`, func(t *testing.T, s *job.JobSpec) {
			if *s.QueueSettings != (job.QueueSettings{JobTier: "Spot", Priority: "Low"}) {
				t.Errorf("queue_settings %+v", s.QueueSettings)
			}
		}},
		{"retries", `"retries": 3`, func(t *testing.T, s *job.JobSpec) {
			if s.Retries == nil || *s.Retries != 3 {
				t.Errorf("retries %v", s.Retries)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := decodeJob(t, doc(tt.extra))
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

func wantTimeout(n int) func(*testing.T, *job.JobSpec) {
	return func(t *testing.T, s *job.JobSpec) {
		t.Helper()
		if s.Limits == nil || s.Limits.Timeout != n {
			t.Errorf("limits %+v, want timeout %d", s.Limits, n)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func TestDecodeJobSpecErrors(t *testing.T) {
	base := `"command": "run", "compute": "cpu-cluster"`
	tests := []struct {
		name  string
		doc   string // a whole document when it does not start with a quote
		field string
		frags []string
	}{
		// The document.
		{"empty", ``, "", []string{"empty"}},
		{"blank", "  \n", "", []string{"empty"}},
		{"null", `null`, "", []string{"mapping", "null"}},
		{"list", `[]`, "", []string{"mapping", "list"}},
		{"string", `"job"`, "", []string{"mapping", "string"}},
		{"number", `3`, "", []string{"mapping", "number"}},
		{"truncated", `{"command": "run"`, "", []string{"not valid JSON"}},
		{"trailing data", `{"command": "run"} {}`, "", []string{"not valid JSON"}},
		// Top-level keys.
		{"sweep job", `{"type": "sweep", "trial": {"command": "x"}, "search_space": {}}`, "type", []string{"only command jobs are supported"}},
		{"pipeline job", `{"type": "pipeline", "jobs": {}}`, "type", []string{"only command jobs are supported", "pipeline"}},
		{"automl job", `{"type": "automl", "task": "classification", "training_data": {"path": "x"}}`, "type", []string{"Shoal does not run AutoML jobs", "sweep job"}},
		{"spark job", `{"type": "Spark", "entry": {"file": "a.py"}, "identity": {"type": "user_identity"}}`, "type", []string{"Shoal does not run Spark jobs", "pyspark"}},
		{"finetuning job", `{"type": "finetuning", "model": "azureml:m:1"}`, "type", []string{"Shoal does not run fine-tuning jobs", "command job"}},
		{"unknown job type", `{"type": "data_transfer", "task": {}}`, "type", []string{"command, pipeline and sweep"}},
		{"a parallel job alone", `{"type": "parallel", "task": {}}`, "type", []string{"step of a pipeline job", "batch endpoint"}},
		{"type not a string", `"type": 1`, "type", []string{"must be a string"}},
		{"unknown key", `"comand": "x"`, "comand", []string{`unknown key "comand"`, "command", "compute", "inputs", "queue_settings"}},
		{"unknown key in a show output", `"id": "x", "foo": 1`, "foo", []string{"unknown key"}},
		{"services a list", `"services": ["jupyter_lab"]`, "services", []string{"mapping of service names"}},
		{"service a string", `"services": {"nb": "jupyter_lab"}`, "services.nb", []string{"type: jupyter_lab"}},
		{"service unknown key", `"services": {"nb": {"type": "jupyter_lab", "token": "x"}}`, "services.nb.token", []string{"unknown key"}},
		{"service port words", `"services": {"app": {"type": "custom", "port": "eighty"}}`, "services.app.port", []string{"whole number"}},
		{"service name with a slash", `"services": {"a/b": {"type": "ssh"}}`, "services.a/b", []string{"letters, digits"}},
		{"identity a string", `"identity": "user_identity"`, "identity", []string{"mapping"}},
		{"identity unknown key", `"identity": {"type": "managed", "tenant_id": "x"}`, "identity.tenant_id", []string{"unknown key", "client_id"}},
		{"identity type a number", `"identity": {"type": 1}`, "identity.type", []string{"must be a string"}},
		{"command not a string", `"command": ["python", "x.py"], "compute": "c"`, "command", []string{"must be a string"}},
		{"command a number", `"command": 3`, "command", []string{"must be a string"}},
		{"code not a string", `"code": {"path": "src"}`, "code", []string{"must be a string"}},
		{"compute not a string", `"compute": 3, "command": "x"`, "compute", []string{"must be a string"}},
		{"name a mapping", `"name": {}`, "name", []string{"must be a string"}},
		{"description a list", `"description": []`, "description", []string{"must be a string"}},
		{"tags a list", `"tags": ["a"]`, "tags", []string{"mapping"}},
		{"tag value a mapping", `"tags": {"a": {"b": 1}}`, "tags.a", nil},
		{"environment a number", `"environment": 3`, "environment", []string{"azureml:"}},
		{"environment a list", `"environment": ["a"]`, "environment", nil},
		{"environment variables a list", `"environment_variables": ["A=1"]`, "environment_variables", []string{"mapping"}},
		{"environment variable a mapping", `"environment_variables": {"A": {"b": 1}}`, "environment_variables.A", []string{"string, number or boolean"}},
		// inputs
		{"inputs a list", `"inputs": [1]`, "inputs", []string{"mapping"}},
		{"input null", `"inputs": {"x": null}`, "inputs.x", []string{"no value"}},
		{"input a list", `"inputs": {"x": [1, 2]}`, "inputs.x", []string{"not a list"}},
		{"input unknown key", `"inputs": {"data": {"type": "uri_folder", "path": "d", "datastore": "x"}}`, "inputs.data.datastore", []string{"unknown key", "path", "mode"}},
		{"input type not a string", `"inputs": {"x": {"type": 1, "path": "d"}}`, "inputs.x.type", []string{"must be a string"}},
		{"input path not a string", `"inputs": {"x": {"path": 1}}`, "inputs.x.path", []string{"must be a string"}},
		{"input mode not a string", `"inputs": {"x": {"path": "d", "mode": true}}`, "inputs.x.mode", []string{"must be a string"}},
		{"input without path or value", `"inputs": {"x": {"mode": "download"}}`, "inputs.x", []string{"path", "value"}},
		{"input empty mapping", `"inputs": {"x": {}}`, "inputs.x", []string{"path"}},
		{"uri input without path", `"inputs": {"x": {"type": "uri_folder"}}`, "inputs.x.path", []string{"required"}},
		{"uri input with blank path", `"inputs": {"x": {"type": "uri_file", "path": " "}}`, "inputs.x.path", []string{"required"}},
		{"uri input with a value", `"inputs": {"x": {"type": "uri_file", "path": "p", "value": 1}}`, "inputs.x.value", []string{"not allowed"}},
		{"path and value", `"inputs": {"x": {"path": "p", "default": 1}}`, "inputs.x.default", []string{"not allowed"}},
		{"default and value", `"inputs": {"x": {"default": 1, "value": 2}}`, "inputs.x.value", []string{"not both"}},
		{"untyped value with mode", `"inputs": {"x": {"value": 1, "mode": "download"}}`, "inputs.x.mode", nil},
		{"unsupported input type", `"inputs": {"x": {"type": "uri_table", "path": "p"}}`, "inputs.x.type", []string{"not supported", "uri_folder", "mltable", "mlflow_model"}},
		{"dataset input type", `"inputs": {"x": {"type": "spark_dataset", "path": "p"}}`, "inputs.x.type", []string{"not supported"}},
		{"integer without default", `"inputs": {"x": {"type": "integer"}}`, "inputs.x.default", []string{"required"}},
		{"integer with a fraction", `"inputs": {"x": {"type": "integer", "default": 5.5}}`, "inputs.x.default", []string{"whole number"}},
		{"integer from words", `"inputs": {"x": {"type": "integer", "default": "five"}}`, "inputs.x.default", []string{"whole number"}},
		{"integer too large", `"inputs": {"x": {"type": "integer", "default": 1e300}}`, "inputs.x.default", []string{"whole number"}},
		{"number from words", `"inputs": {"x": {"type": "number", "value": "lots"}}`, "inputs.x.value", []string{"number"}},
		{"boolean from words", `"inputs": {"x": {"type": "boolean", "default": "yes"}}`, "inputs.x.default", []string{"true or false"}},
		{"literal type with path", `"inputs": {"x": {"type": "string", "default": "a", "path": "p"}}`, "inputs.x.path", []string{"not allowed"}},
		{"literal type with mode", `"inputs": {"x": {"type": "string", "default": "a", "mode": "download"}}`, "inputs.x.mode", []string{"not allowed"}},
		{"default a mapping", `"inputs": {"x": {"type": "string", "default": {"a": 1}}}`, "inputs.x.default", []string{"number, string or boolean"}},
		// outputs
		{"outputs a list", `"outputs": ["model"]`, "outputs", []string{"mapping"}},
		{"output a string", `"outputs": {"model": "./out"}`, "outputs.model", []string{"mapping"}},
		{"output unknown key", `"outputs": {"model": {"type": "uri_folder", "name": "m", "version": 1, "datastore": "x"}}`, "outputs.model.datastore", []string{"unknown key", "mode", "name", "path", "type", "version"}},
		{"output unsupported type", `"outputs": {"model": {"type": "string"}}`, "outputs.model.type", []string{"not supported", "uri_folder, uri_file, mltable"}},
		{"output mode not a string", `"outputs": {"model": {"mode": 1}}`, "outputs.model.mode", []string{"must be a string"}},
		// resources
		{"resources a list", `"resources": [1]`, "resources", []string{"mapping"}},
		{"resources unknown key", `"resources": {"gpu_count": 1}`, "resources.gpu_count", []string{"unknown key", "instance_count"}},
		{"instance_count zero", `"resources": {"instance_count": 0}`, "resources.instance_count", []string{"1 or more"}},
		{"instance_count negative", `"resources": {"instance_count": -2}`, "resources.instance_count", []string{"1 or more"}},
		{"instance_count a fraction", `"resources": {"instance_count": 1.5}`, "resources.instance_count", []string{"whole number"}},
		{"instance_count words", `"resources": {"instance_count": "two"}`, "resources.instance_count", []string{"whole number"}},
		{"instance_type a number", `"resources": {"instance_type": 3}`, "resources.instance_type", []string{"must be a string"}},
		{"shm_size a mapping", `"resources": {"shm_size": {}}`, "resources.shm_size", []string{"must be a string"}},
		// distribution
		{"distribution a string", `"distribution": "pytorch"`, "distribution", []string{"mapping"}},
		{"distribution unknown key", `"distribution": {"type": "tensorflow", "workers": 2}`, "distribution.workers", []string{"unknown key", "worker_count"}},
		{"worker count zero", `"distribution": {"type": "tensorflow", "worker_count": 0}`, "distribution.worker_count", []string{"1 or more"}},
		{"parameter servers negative", `"distribution": {"type": "tensorflow", "parameter_server_count": -1}`, "distribution.parameter_server_count", []string{"0 or more"}},
		{"worker count words", `"distribution": {"type": "tensorflow", "worker_count": "two"}`, "distribution.worker_count", []string{"whole number"}},
		{"process count zero", `"distribution": {"type": "mpi", "process_count_per_instance": 0}`, "distribution.process_count_per_instance", []string{"1 or more"}},
		{"process count a fraction", `"distribution": {"type": "mpi", "process_count_per_instance": 0.5}`, "distribution.process_count_per_instance", []string{"whole number"}},
		{"distribution type a number", `"distribution": {"type": 1}`, "distribution.type", []string{"must be a string"}},
		// limits
		{"limits unknown key", `"limits": {"max_total_trials": 3}`, "limits.max_total_trials", []string{"unknown key", "timeout"}},
		{"timeout zero", `"limits": {"timeout": 0}`, "limits.timeout", []string{"at least 1 second"}},
		{"timeout zero string", `"limits": {"timeout": "0"}`, "limits.timeout", []string{"at least 1 second"}},
		{"timeout negative", `"limits": {"timeout": -5}`, "limits.timeout", []string{"at least 1 second"}},
		{"timeout a fraction", `"limits": {"timeout": 1.5}`, "limits.timeout", []string{"whole number"}},
		{"timeout words", `"limits": {"timeout": "one hour"}`, "limits.timeout", []string{"ISO 8601"}},
		{"timeout empty ISO", `"limits": {"timeout": "PT"}`, "limits.timeout", []string{"ISO 8601"}},
		{"timeout too large", `"limits": {"timeout": 1e12}`, "limits.timeout", []string{"whole number"}},
		// queue_settings
		{"queue settings unknown key", `"queue_settings": {"priority": "high", "tier": "spot"}`, "queue_settings.tier", []string{"unknown key", "job_tier"}},
		{"priority a number", `"queue_settings": {"priority": 1}`, "queue_settings.priority", []string{"must be a string"}},
		{"job_tier a boolean", `"queue_settings": {"job_tier": true}`, "queue_settings.job_tier", []string{"must be a string"}},
		// retries
		{"retries a fraction", `"retries": 1.5`, "retries", []string{"whole number"}},
		{"retries words", `"retries": "three"`, "retries", []string{"whole number"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := tt.doc
			if strings.HasPrefix(doc, `"`) && strings.Contains(doc, ":") {
				doc = "{" + base + ", " + doc + "}"
			}
			_, err := job.DecodeJobSpec([]byte(doc))
			coretest.WantFieldError(t, err, tt.field, tt.frags...)
		})
	}
}
