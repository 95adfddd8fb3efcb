package asset_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// Hostile and malformed data asset documents are refused naming the
// field and the rule.
func TestDataRefusesHostileInput(t *testing.T) {
	hugeTags := map[string]string{}
	for i := 0; i < 51; i++ {
		hugeTags[strings.Repeat("k", i+1)] = "v"
	}
	for _, tc := range []struct {
		name  string
		d     asset.Data
		field string
		rule  string
	}{
		{"dotdot", asset.Data{Name: "d", Path: "azureml://datastores/ds/paths/a/../../etc"}, "path", "'..'"},
		{"dotdot s3", asset.Data{Name: "d", Path: "s3://bucket/../other"}, "path", "'..'"},
		{"encoded dotdot", asset.Data{Name: "d", Path: "https://h/a/%2E%2E/b"}, "path", "'..'"},
		{"nul", asset.Data{Name: "d", Path: "https://h/a\x00b"}, "path", "control"},
		{"backslash", asset.Data{Name: "d", Path: `https://h/a\..\b`}, "path", "backslash"},
		{"local path", asset.Data{Name: "d", Path: "./data"}, "path", "local path"},
		{"file scheme", asset.Data{Name: "d", Path: "file:///etc/passwd"}, "path", "not a URI"},
		{"unknown type", asset.Data{Name: "d", Type: "uri_table", Path: "https://h/x"}, "type", "uri_file, uri_folder, mltable"},
		{"model type on data", asset.Data{Name: "d", Type: "mlflow_model", Path: "https://h/x"}, "type", "not one of"},
		{"huge tags", asset.Data{Name: "d", Path: "https://h/x", Tags: hugeTags}, "tags", "at most 50"},
		{"huge tag value", asset.Data{Name: "d", Path: "https://h/x", Tags: map[string]string{"k": strings.Repeat("v", 300)}}, "tags.k", "256"},
		{"no name", asset.Data{Path: "https://h/x"}, "name", "required"},
		{"bad name", asset.Data{Name: "a:b", Path: "https://h/x"}, "name", "letters"},
		{"bad version", asset.Data{Name: "d", Version: "1/2", Path: "https://h/x"}, "version", "letters"},
		{"no path", asset.Data{Name: "d"}, "path", "blank"},
		{"control in description", asset.Data{Name: "d", Path: "https://h/x", Description: "a\x1b[2Jb"}, "description", "control"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.d
			err := asset.NormalizeData(&d)
			if core.ErrorField(err) != tc.field || !strings.Contains(err.Error(), tc.rule) {
				t.Fatalf("got %v (field %q), want field %q saying %q", err, core.ErrorField(err), tc.field, tc.rule)
			}
		})
	}
}

// A data asset's type defaults to uri_folder, as in Azure, and every URI
// kind of the design is accepted.
func TestNormalizeData(t *testing.T) {
	for _, p := range []string{
		"azureml://datastores/workspaceblobstore/paths/LocalUpload/x/",
		"azureml://subscriptions/s/resourcegroups/r/workspaces/w/datastores/ds/paths/a/b.csv",
		"https://acct.blob.core.windows.net/c/iris.csv",
		"wasbs://data@acct.blob.core.windows.net/p/",
		"abfss://lake@acct.dfs.core.windows.net/p/",
		"s3://bucket/key/",
		"azureml:other:1",
	} {
		d := asset.Data{Name: " iris ", Path: " " + p, Type: " URI_File"}
		if err := asset.NormalizeData(&d); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if d.Name != "iris" || d.Path != p || d.Type != asset.DataURIFile {
			t.Fatalf("normalized to %+v", d)
		}
	}
	d := asset.Data{Name: "d", Path: "s3://bucket/k"}
	if err := asset.NormalizeData(&d); err != nil || d.Type != asset.DataURIFolder {
		t.Fatalf("type %q, %v; want the default uri_folder", d.Type, err)
	}
}

// A data asset's document is decoded strictly: an unknown key is refused
// by name, and Azure's $schema is accepted.
func TestDecodeData(t *testing.T) {
	d, err := asset.DecodeData([]byte(`{"$schema":"https://azuremlschemas.azureedge.net/latest/data.schema.json","name":"iris","version":"1","type":"uri_file","path":"https://h/iris.csv","tags":{"a":"b"}}`))
	if err != nil || d.Name != "iris" || d.Version != "1" || d.Type != "uri_file" || d.Tags["a"] != "b" {
		t.Fatalf("%+v, %v", d, err)
	}
	for _, tc := range []struct{ doc, field, rule string }{
		{`{"name":"iris","paht":"x"}`, "paht", "unknown key"},
		{`{"name":"iris","datastore":"x"}`, "datastore", "unknown key"},
		{`{"name":"iris","tags":["a"]}`, "tags", "wrong type"},
		{`["x"]`, "", "not a mapping"},
	} {
		_, err := asset.DecodeData([]byte(tc.doc))
		if core.ErrorField(err) != tc.field || !strings.Contains(err.Error(), tc.rule) {
			t.Errorf("%s: got %v, want field %q saying %q", tc.doc, err, tc.field, tc.rule)
		}
	}
}

// Two versions are the same data when their definitions are, whoever
// created them when; the comparison leaves both as they were.
func TestSameData(t *testing.T) {
	a := &asset.Data{Workspace: "w", Name: "Iris", Version: "1", Type: "uri_file", Path: "https://h/x", CreatedBy: "alice"}
	b := &asset.Data{Workspace: "w", Name: "iris", Version: "1", Type: "uri_file", Path: "https://h/x", CreatedBy: "bob", Archived: true}
	if !asset.SameData(a, b) {
		t.Fatal("the same definition is not the same")
	}
	if a.CreatedBy != "alice" || b.Name != "iris" || !b.Archived || a.Workspace != "w" {
		t.Fatalf("the comparison changed them: %+v %+v", a, b)
	}
	b.Path = "https://h/y"
	if asset.SameData(a, b) {
		t.Fatal("another path is the same")
	}
}
