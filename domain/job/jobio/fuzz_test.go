package jobio_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/domain/job/jobio"
)

// FuzzDecodeInput: any input document decodes to a checked input or to a
// field error, never a panic; an input accepted is data at a path of a
// known kind and type in a mode its type takes, or a literal; and what is
// accepted reads back the same after a JSON round trip.
func FuzzDecodeInput(f *testing.F) {
	for _, s := range []string{
		`null`, `5`, `"x"`, `[]`, `{}`,
		`{"path": "./data"}`,
		`{"type": "mltable", "path": "azureml:t:1", "mode": "eval_mount"}`,
		`{"type": "uri_file", "path": "https://h/a/%2e%2e/b"}`,
		`{"type": "mlflow_model", "path": "azureml://registries/r/models/m/versions/1", "mode": "direct"}`,
		`{"type": "uri_folder", "path": "azureml://datastores/d/paths/../x"}`,
		`{"type": "integer", "default": "5"}`,
		`{"type": "uri_folder", "path": "s3://b/k", "mode": "rw_mount"}`,
		`{"type": "custom_model", "path": "wasbs://c@a.blob.core.windows.net/m\\x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		in, err := jobio.DecodeInput("inputs.x", doc)
		if err == nil {
			err = jobio.NormalizeInput("inputs.x", in)
		}
		if err != nil {
			coretest.FuzzCheckError(t, "input", doc, err)
			return
		}
		if in.Value == nil {
			if !jobio.IsPathType(in.Type) || in.Path == "" {
				t.Fatalf("accepted input is neither literal nor data: %+v", in)
			}
			if in.Mode != "" && (in.Mode == jobio.ModeEvalMount || in.Mode == jobio.ModeEvalDownload) && in.Type != jobio.TypeMLTable {
				t.Fatalf("eval mode on %s accepted", in.Type)
			}
			if jobio.PathKind(in.Path).Remote() && jobio.CheckRemotePath("p", in.Path) != nil {
				t.Fatalf("remote path %q accepted", in.Path)
			}
		}
		out, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := jobio.DecodeInput("inputs.x", out)
		if err == nil {
			err = jobio.NormalizeInput("inputs.x", again)
		}
		if err != nil {
			// A literal's JSON is {"value": ...}, which decodes as a value.
			t.Fatalf("round trip of %s: %v", out, err)
		}
		if !reflect.DeepEqual(in, again) {
			t.Fatalf("round trip changed %+v to %+v", in, again)
		}
	})
}
