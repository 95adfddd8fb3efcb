package asset

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
)

// A job output URI is read as Azure writes it (the artifacts, a named
// output, a path inside either, any case in its fixed words); one that
// names no job or output, or whose path would leave the output, is
// refused naming the field.
func TestParseJobOutputURI(t *testing.T) {
	good := map[string]JobOutputURI{
		"azureml://jobs/j1/outputs/artifacts/paths/model/":  {Job: "j1", Output: "artifacts", Path: "model/"},
		"AzureML://Jobs/j1/Outputs/out/Paths/a/b.txt":       {Job: "j1", Output: "out", Path: "a/b.txt"},
		"azureml://jobs/j1/outputs/out":                     {Job: "j1", Output: "out"},
		"azureml://jobs/j1/outputs/out/":                    {Job: "j1", Output: "out"},
		" azureml://jobs/j1/outputs/artifacts/paths/x%20y ": {Job: "j1", Output: "artifacts", Path: "x%20y"},
	}
	for in, want := range good {
		if got, err := ParseJobOutputURI("path", in); err != nil || got != want {
			t.Errorf("%q = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{
		"azureml://jobs/",
		"azureml://jobs/j1",
		"azureml://jobs/j1/inputs/x",
		"azureml://jobs//outputs/x",
		"azureml://jobs/j1/outputs/x/files/a",
		"azureml://jobs/j1/outputs/artifacts/paths/../../j2/outputs",
		"azureml://jobs/j1/outputs/artifacts/paths/a/%2e%2e/b",
		"azureml://jobs/j1/outputs/artifacts/paths/a%2fb",
		"azureml://jobs/..%2fj2/outputs/artifacts",
		"azureml://jobs/j1/outputs/artifacts/paths/./a",
		"azureml://jobs/j1/outputs/artifacts/paths/a\\b",
		"azureml://jobs/j1/outputs/artifacts/paths/a?sig=x",
		"azureml://datastores/workspaceblobstore/paths/a",
	} {
		if _, err := ParseJobOutputURI("path", bad); core.ErrorField(err) != "path" {
			t.Errorf("%q: %v; want refused naming path", bad, err)
		}
	}
	if IsJobOutputURI("azureml://datastores/x/paths/y") || !IsJobOutputURI("AZUREML://JOBS/j/outputs/o") {
		t.Error("IsJobOutputURI misreads the prefix")
	}
}
