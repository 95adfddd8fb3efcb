package service_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
)

// The server takes asset references, datastore URIs and URLs as inputs
// as sent (assets it has; they are fetched when an attempt is placed)
// and refuses a local path, which it cannot read, and an artifact never
// uploaded.
func TestSubmitTakesRemoteInputsAndRefusesLocalPaths(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 600)
	h.registerData("sampledata", "", "uri_folder", "https://example.com/data/")
	h.registerModel("model", "1", "mlflow_model", "https://example.com/model/")
	h.submitSpec(&job.JobSpec{Name: "remote", Command: "ls ${{inputs.a}} ${{inputs.b}} ${{inputs.c}} ${{inputs.m}}", Compute: "cpu",
		Inputs: map[string]*job.JobInput{
			"a": {Type: "uri_file", Path: "https://azuremlexamples.blob.core.windows.net/datasets/iris.csv"},
			"b": {Type: "uri_folder", Path: "azureml:sampledata@latest", Mode: "download"},
			"c": {Type: "mltable", Path: "azureml://datastores/workspaceblobstore/paths/t/", Mode: "eval_mount"},
			"m": {Type: "mlflow_model", Path: "azureml:model:1"},
		},
		Outputs: map[string]*job.JobOutput{"o": {Type: "custom_model", Name: "trained", Version: "1"}}})
	j, err := h.svc.FindJob(h.ctx, ws, "remote")
	if err != nil {
		t.Fatal(err)
	}
	if p := j.Inputs["a"].Path; p != "https://azuremlexamples.blob.core.windows.net/datasets/iris.csv" {
		t.Errorf("stored input a = %q", p)
	}
	if o := j.Outputs["o"]; o.Name != "trained" || o.Type != "custom_model" {
		t.Errorf("stored output o = %+v", o)
	}
	_, _, err = h.svc.SubmitJob(h.ctx, ws, &job.JobSpec{Command: "ls ${{inputs.a}}", Compute: "cpu",
		Inputs: map[string]*job.JobInput{"a": {Type: "uri_folder", Path: "./data"}}})
	wantFieldRefusal(t, "local path", err, "inputs.a.path", "local path", "shoal job create -f")
	_, _, err = h.svc.SubmitJob(h.ctx, ws, &job.JobSpec{Command: "ls ${{inputs.a}}", Compute: "cpu",
		Inputs: map[string]*job.JobInput{"a": {Type: "uri_folder", Path: "sha256:" + strings.Repeat("e", 64)}}})
	wantFieldRefusal(t, "missing artifact", err, "inputs.a.path", "has not been uploaded")
	_, _, err = h.svc.SubmitJob(h.ctx, ws, &job.JobSpec{Command: "ls ${{inputs.a}}", Compute: "cpu",
		Inputs: map[string]*job.JobInput{"a": {Type: "uri_folder", Path: "azureml://datastores/d/paths/../../x"}}})
	wantFieldRefusal(t, "dot-dot", err, "inputs.a.path", "'..' segments")
}
