package jobio_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/domain/job/jobio"
)

func TestPathKind(t *testing.T) {
	hash := "sha256:" + strings.Repeat("ab", 32)
	for _, tt := range []struct {
		path string
		want jobio.Kind
	}{
		{"./data", jobio.Local},
		{"data/iris.csv", jobio.Local},
		{"/abs/data", jobio.Local},
		{"file:./data", jobio.Local},
		{"", jobio.Local},
		{hash, jobio.Uploaded},
		{"sha256:abc", jobio.Local}, // not an artifact ID: the CLI looks for the file and says it is missing
		{"sha256:" + strings.Repeat("AB", 32), jobio.Local},
		{"azureml:iris:1", jobio.AssetRef},
		{"azureml:iris@latest", jobio.AssetRef},
		{"AzureML:iris@latest", jobio.AssetRef},
		{"azureml://locations/westus/workspaces/w/data/iris/versions/1", jobio.AssetRef},
		{"azureml://subscriptions/s/resourcegroups/r/workspaces/w/models/m/versions/2", jobio.AssetRef},
		{"azureml://registries/azureml/models/bert/versions/1", jobio.AssetRef},
		{"azureml://datastores/workspaceblobstore/paths/data/iris.csv", jobio.DatastoreURI},
		{"azureml://subscriptions/s/resourcegroups/r/workspaces/w/datastores/blob/paths/a/", jobio.DatastoreURI},
		{"https://azuremlexamples.blob.core.windows.net/datasets/iris.csv", jobio.URL},
		{"http://10.0.0.5:8080/iris.csv", jobio.URL},
		{"wasbs://data@acct.blob.core.windows.net/iris.csv", jobio.URL},
		{"abfss://fs@acct.dfs.core.windows.net/folder/", jobio.URL},
		{"s3://bucket/key", jobio.URL},
		{"ftp://host/file", jobio.URL}, // a URL, refused by CheckInputPath for its scheme
		{"  https://host/x  ", jobio.URL},
	} {
		if got := jobio.PathKind(tt.path); got != tt.want {
			t.Errorf("PathKind(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestCheckInputPathAcceptsEveryRemoteKind(t *testing.T) {
	for _, p := range []string{
		"./data", "../shared/data", // local: the CLI's, even with ..
		"azureml:iris:1", "azureml:iris@latest",
		"azureml://datastores/workspaceblobstore/paths/data/",
		"azureml://subscriptions/s/resourcegroups/r/workspaces/w/datastores/blob/paths/a/b.csv",
		"azureml://locations/westus/workspaces/w/data/iris/versions/1",
		"https://acct.blob.core.windows.net/c/iris.csv?sv=1&sig=x",
		"http://10.0.0.5/iris.csv", "wasbs://data@acct.blob.core.windows.net/p", "abfss://lake@acct.dfs.core.windows.net/p/",
		"s3://bucket/prefix/", "HTTPS://Host/A",
		"https://host/a..b/c...", // dots inside a name are not a segment ..
	} {
		if err := jobio.CheckInputPath("inputs.x.path", p); err != nil {
			t.Errorf("CheckInputPath(%q) = %v", p, err)
		}
	}
}

// Attacks: a remote path that climbs out of what it names, hides a
// separator or NUL, or uses a scheme no reader exists for.
func TestCheckInputPathRefusals(t *testing.T) {
	for _, tt := range []struct {
		path  string
		frags []string
	}{
		{"azureml://datastores/blob/paths/../../etc", []string{"'..' segments"}},
		{"azureml://datastores/blob/paths/a/..", []string{"'..' segments"}},
		{"https://host/c/%2e%2e/secret", []string{"'..' segments"}},
		{"https://host/c/%2E%2E/secret", []string{"'..' segments"}},
		{"s3://bucket/a/%2fetc", []string{"encoded"}},
		{"s3://bucket/a%00b", []string{"encoded"}},
		{"wasbs://c@a.blob.core.windows.net/..", []string{"'..' segments"}},
		{"azureml://registries/azureml/models/bert/versions/1", []string{"registry", "not supported"}},
		{"azureml:../x", []string{"'..' segments"}},
		{"azureml://datastores\\blob/paths/x", []string{"backslashes"}},
		{"https://host/a\\..\\b", []string{"backslashes"}},
		{"https://host/a\x00b", []string{"path or URI on one line"}},
		{"ftp://host/file", []string{"scheme ftp is not supported", "https://", "s3://"}},
		{"file:///etc/passwd", []string{"scheme file is not supported"}},
		{"gs://bucket/x", []string{"scheme gs is not supported"}},
		{"https://", []string{"names no host"}},
		{"azureml:", []string{"names nothing"}},
		{"azureml://", []string{"names nothing"}},
		{"   ", []string{"blank"}},
	} {
		t.Run(tt.path, func(t *testing.T) {
			coretest.WantFieldError(t, jobio.CheckInputPath("inputs.x.path", tt.path), "inputs.x.path", tt.frags...)
		})
	}
}

func TestCheckOutputPath(t *testing.T) {
	for _, p := range []string{
		"azureml://datastores/workspaceblobstore/paths/azureml/${{name}}/${{output_name}}/",
		"azureml://datastores/blob/paths/models/${{ name }}/model.pkl",
		"azureml://subscriptions/s/resourcegroups/r/workspaces/w/datastores/blob/paths/out/",
		jobio.DefaultOutputPath,
		// Azure's parallel examples write their rows here.
		"azureml://datastores/${{default_datastore}}/paths/${{name}}/aggregated_returns.csv",
	} {
		if err := jobio.CheckOutputPath("outputs.o.path", p); err != nil {
			t.Errorf("CheckOutputPath(%q) = %v", p, err)
		}
	}
	for _, tt := range []struct {
		path  string
		frags []string
	}{
		{"./outputs", []string{"is a local path", "azureml://datastores/<datastore>/paths/<path>"}},
		{"https://host/out", []string{"is a URL", "datastore URI"}},
		{"azureml:model:1", []string{"is an asset reference"}},
		{"azureml://datastores/blob/paths/${{inputs.x}}/", []string{"${{inputs.x}}", "${{name}}", "${{output_name}}"}},
		{"azureml://datastores/blob/paths/${{name}}/../other/", []string{"'..' segments"}},
		{"azureml://datastores/${{default_datastore}}/paths/a/../../b", []string{"'..' segments"}},
		{"azureml://datastores/blob/paths/a\nb", []string{"one line"}},
	} {
		t.Run(tt.path, func(t *testing.T) {
			coretest.WantFieldError(t, jobio.CheckOutputPath("outputs.o.path", tt.path), "outputs.o.path", tt.frags...)
		})
	}
}

func TestExpandOutputPath(t *testing.T) {
	for _, tt := range []struct{ path, want string }{
		{"", "azureml://datastores/workspaceblobstore/paths/azureml/keen_fox_1/model/"},
		{"azureml://datastores/blob/paths/${{name}}/${{ output_name }}/${{name}}.txt", "azureml://datastores/blob/paths/keen_fox_1/model/keen_fox_1.txt"},
		{"azureml://datastores/blob/paths/fixed/", "azureml://datastores/blob/paths/fixed/"},
		{"azureml://datastores/blob/paths/${{other}}/", "azureml://datastores/blob/paths/${{other}}/"},
		{"azureml://datastores/${{ default_datastore }}/paths/${{name}}/rows.csv", "azureml://datastores/workspaceblobstore/paths/keen_fox_1/rows.csv"},
	} {
		if got := jobio.ExpandOutputPath(tt.path, "keen_fox_1", "model"); got != tt.want {
			t.Errorf("ExpandOutputPath(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}
