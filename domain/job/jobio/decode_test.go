package jobio_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/domain/job/jobio"
)

// decodeInput decodes and normalises one input as a job's are.
func decodeInput(doc string) (*jobio.Input, error) {
	in, err := jobio.DecodeInput("inputs.x", json.RawMessage(doc))
	if err != nil {
		return nil, err
	}
	return in, jobio.NormalizeInput("inputs.x", in)
}

func decodeOutput(doc string) (*jobio.Output, error) {
	o, err := jobio.DecodeOutput("outputs.o", json.RawMessage(doc))
	if err != nil {
		return nil, err
	}
	return o, jobio.NormalizeOutput("outputs.o", o)
}

func TestInputsEveryTypeModeAndPathKind(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want jobio.Input
	}{
		{`{"path": "./data"}`, jobio.Input{Type: "uri_folder", Path: "./data"}},
		{`{"type": "URI_FILE", "path": "https://h/iris.csv", "mode": "Download"}`, jobio.Input{Type: "uri_file", Path: "https://h/iris.csv", Mode: "download"}},
		{`{"type": "uri_folder", "path": "azureml://datastores/workspaceblobstore/paths/d/", "mode": "ro_mount"}`, jobio.Input{Type: "uri_folder", Path: "azureml://datastores/workspaceblobstore/paths/d/", Mode: "ro_mount"}},
		{`{"type": "uri_folder", "path": "azureml:sampledata@latest", "mode": "direct"}`, jobio.Input{Type: "uri_folder", Path: "azureml:sampledata@latest", Mode: "direct"}},
		{`{"type": "mltable", "path": "azureml:iris-table:2", "mode": "eval_mount"}`, jobio.Input{Type: "mltable", Path: "azureml:iris-table:2", Mode: "eval_mount"}},
		{`{"type": "mltable", "path": "./table", "mode": "eval_download"}`, jobio.Input{Type: "mltable", Path: "./table", Mode: "eval_download"}},
		{`{"type": "custom_model", "path": "azureml:my-model:1"}`, jobio.Input{Type: "custom_model", Path: "azureml:my-model:1"}},
		{`{"type": "mlflow_model", "path": "azureml://models/bert/versions/1", "mode": "download"}`, jobio.Input{Type: "mlflow_model", Path: "azureml://models/bert/versions/1", Mode: "download"}},
		{`{"type": "triton_model", "path": "s3://models/triton/"}`, jobio.Input{Type: "triton_model", Path: "s3://models/triton/"}},
		{`{"type": "uri_file", "path": "wasbs://data@acct.blob.core.windows.net/f.csv"}`, jobio.Input{Type: "uri_file", Path: "wasbs://data@acct.blob.core.windows.net/f.csv"}},
		{`{"type": "uri_folder", "path": "abfss://lake@acct.dfs.core.windows.net/d/"}`, jobio.Input{Type: "uri_folder", Path: "abfss://lake@acct.dfs.core.windows.net/d/"}},
		{`5`, jobio.Input{Value: json.Number("5")}},
		{`"text"`, jobio.Input{Value: "text"}},
		{`{"type": "integer", "default": "7"}`, jobio.Input{Value: json.Number("7")}},
		{`{"type": "boolean", "value": "True"}`, jobio.Input{Value: true}},
		{`{"type": "number", "default": 0.5}`, jobio.Input{Value: json.Number("0.5")}},
		{`{"type": "string", "default": 1.50}`, jobio.Input{Value: "1.50"}},
	} {
		t.Run(tt.doc, func(t *testing.T) {
			in, err := decodeInput(tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*in, tt.want) {
				t.Fatalf("got %+v, want %+v", *in, tt.want)
			}
		})
	}
}

func TestInputRefusals(t *testing.T) {
	for _, tt := range []struct {
		name, doc, field string
		frags            []string
	}{
		{"null", `null`, "inputs.x", []string{"has no value"}},
		{"list", `[1]`, "inputs.x", []string{"not a list"}},
		{"unknown key", `{"path": "p", "datastore": "d"}`, "inputs.x.datastore", []string{"unknown key", "mode", "path"}},
		{"unknown type", `{"type": "uri_table", "path": "p"}`, "inputs.x.type", []string{"not supported", "uri_folder", "mltable", "custom_model", "mlflow_model", "triton_model", "integer"}},
		{"data without path", `{"type": "mlflow_model"}`, "inputs.x.path", []string{"required for a mlflow_model input"}},
		{"data with default", `{"type": "uri_file", "path": "p", "default": 1}`, "inputs.x.default", []string{"not allowed for a uri_file input"}},
		{"literal with path", `{"type": "integer", "path": "p", "default": 1}`, "inputs.x.path", []string{"not allowed"}},
		{"literal with mode", `{"type": "string", "mode": "download", "default": "a"}`, "inputs.x.mode", []string{"not allowed"}},
		{"eval_mount on uri_folder", `{"type": "uri_folder", "path": "p", "mode": "eval_mount"}`, "inputs.x.mode", []string{"eval_mount is for mltable inputs only", "uri_folder"}},
		{"eval_download on a model", `{"type": "custom_model", "path": "p", "mode": "eval_download"}`, "inputs.x.mode", []string{"mltable inputs only"}},
		{"rw_mount on an input", `{"type": "uri_folder", "path": "p", "mode": "rw_mount"}`, "inputs.x.mode", []string{"output mode", "read-only"}},
		{"upload on an input", `{"path": "p", "mode": "upload"}`, "inputs.x.mode", []string{"unknown input mode", "ro_mount, download, direct, eval_mount, eval_download"}},
		{"dot-dot in a datastore path", `{"path": "azureml://datastores/d/paths/../../x"}`, "inputs.x.path", []string{"'..' segments"}},
		{"encoded dot-dot in a URL", `{"type": "uri_file", "path": "https://h/a/%2E%2e/b"}`, "inputs.x.path", []string{"'..' segments"}},
		{"NUL in an asset reference", `{"path": "azureml:a\u0000b:1"}`, "inputs.x.path", []string{"one line"}},
		{"unsupported scheme", `{"type": "uri_file", "path": "gs://b/f"}`, "inputs.x.path", []string{"scheme gs is not supported"}},
		{"path not a string", `{"path": 5}`, "inputs.x.path", []string{"must be a string"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeInput(tt.doc)
			coretest.WantFieldError(t, err, tt.field, tt.frags...)
		})
	}
}

func TestOutputsEveryTypeModeAndPath(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want jobio.Output
	}{
		{`null`, jobio.Output{Type: "uri_folder"}},
		{`{}`, jobio.Output{Type: "uri_folder"}},
		{`{"type": "uri_file", "mode": "Upload", "path": "azureml://datastores/workspaceblobstore/paths/${{name}}/hello.txt"}`,
			jobio.Output{Type: "uri_file", Mode: "upload", Path: "azureml://datastores/workspaceblobstore/paths/${{name}}/hello.txt"}},
		{`{"type": "mltable", "mode": "rw_mount"}`, jobio.Output{Type: "mltable", Mode: "rw_mount"}},
		{`{"type": "custom_model", "name": "my-model", "version": 3}`, jobio.Output{Type: "custom_model", Name: "my-model", Version: "3"}},
		{`{"type": "mlflow_model", "name": "m.v2", "path": "azureml://datastores/blob/paths/models/${{output_name}}/"}`,
			jobio.Output{Type: "mlflow_model", Name: "m.v2", Path: "azureml://datastores/blob/paths/models/${{output_name}}/"}},
		{`{"type": "triton_model"}`, jobio.Output{Type: "triton_model"}},
		{`{"type": "uri_folder", "name": "cleaned"}`, jobio.Output{Type: "uri_folder", Name: "cleaned"}},
	} {
		t.Run(tt.doc, func(t *testing.T) {
			o, err := decodeOutput(tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*o, tt.want) {
				t.Fatalf("got %+v, want %+v", *o, tt.want)
			}
		})
	}
}

func TestOutputRefusals(t *testing.T) {
	for _, tt := range []struct {
		name, doc, field string
		frags            []string
	}{
		{"a string", `"x"`, "outputs.o", []string{"must be a mapping"}},
		{"unknown key", `{"type": "uri_folder", "datastore": "d"}`, "outputs.o.datastore", []string{"unknown key", "name", "path", "version"}},
		{"literal type", `{"type": "string"}`, "outputs.o.type", []string{"not supported", "uri_folder", "triton_model"}},
		{"direct mode", `{"mode": "direct"}`, "outputs.o.mode", []string{"direct is an input mode", "rw_mount", "upload"}},
		{"ro_mount mode", `{"mode": "ro_mount"}`, "outputs.o.mode", []string{"unknown output mode", "rw_mount, upload"}},
		{"local path", `{"path": "./out"}`, "outputs.o.path", []string{"datastore URI"}},
		{"URL path", `{"path": "https://acct.blob.core.windows.net/c/out"}`, "outputs.o.path", []string{"is a URL", "azureml://datastores/<datastore>/paths/<path>"}},
		{"unknown placeholder", `{"path": "azureml://datastores/d/paths/${{jobs.x}}"}`, "outputs.o.path", []string{"${{jobs.x}}", "${{name}}"}},
		{"dot-dot", `{"path": "azureml://datastores/d/paths/a/../../b"}`, "outputs.o.path", []string{"'..' segments"}},
		{"bad asset name", `{"name": "-bad name"}`, "outputs.o.name", []string{"letters, digits", "registered"}},
		{"bad version", `{"name": "m", "version": "1/2"}`, "outputs.o.version", []string{"letters, digits"}},
		{"version without name", `{"version": "2"}`, "outputs.o.version", []string{"needs name"}},
		{"name a list", `{"name": ["m"]}`, "outputs.o.name", []string{"must be a string"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeOutput(tt.doc)
			coretest.WantFieldError(t, err, tt.field, tt.frags...)
		})
	}
}

func TestNormalizeNamesAndDefaults(t *testing.T) {
	err := jobio.NormalizeInputs(map[string]*jobio.Input{"bad-name": {Path: "p"}})
	coretest.WantFieldError(t, err, "inputs", "letters, digits and '_'")
	outs := map[string]*jobio.Output{"model": nil}
	if err := jobio.NormalizeOutputs(outs); err != nil {
		t.Fatal(err)
	}
	o := outs["model"]
	if o.Type != jobio.TypeURIFolder || o.OutputMode() != jobio.ModeRWMount || o.PathOrDefault() != jobio.DefaultOutputPath {
		t.Fatalf("default output = %+v (mode %s, path %s)", o, o.OutputMode(), o.PathOrDefault())
	}
	in := &jobio.Input{Type: "uri_folder", Path: "p"}
	if in.InputMode() != jobio.ModeROMount {
		t.Fatalf("default input mode = %s", in.InputMode())
	}
	// A stored job written before outputs had a name still decodes.
	var old jobio.Output
	if err := json.Unmarshal([]byte(`{"type":"uri_folder","mode":"rw_mount","path":"sha256:ab"}`), &old); err != nil || old.Name != "" || old.Path != "sha256:ab" {
		t.Fatalf("old output = %+v, %v", old, err)
	}
}
