package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/api"
	"github.com/shoal-ml/shoal/cli"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store/filestore"
)

// batchServer starts the real API over a SQLite store with a cluster
// "cpu" and a registered model "digits-model" in workspace default, and
// points the CLI at it as the administrator.
func batchServer(t *testing.T) {
	t.Helper()
	db, _ := teststore.Open(t)
	files, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	cat, err := (&config.Config{}).Catalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: db, Catalog: cat, ServerURL: "http://shoal.test", Files: files})
	ctx := context.Background()
	token, err := svc.BootstrapAdmin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	maxN := 2
	if _, _, err := svc.CreateOrApplyCompute(ctx, "default", &compute.ComputeSpec{Name: "cpu", Size: "Standard_DS3_v2", MaxInstances: &maxN}, ""); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(api.NewServer(svc, nil))
	t.Cleanup(ts.Close)
	req, _ := http.NewRequest("POST", ts.URL+"/api/v1/workspaces/default/models",
		strings.NewReader(`{"name":"digits-model","type":"custom_model","path":"azureml://datastores/workspaceblobstore/paths/models/digits/"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("register the model: %v %v", resp, err)
	}
	resp.Body.Close()
	t.Setenv("SHOAL_SERVER", ts.URL)
	t.Setenv("SHOAL_TOKEN", token)
	t.Setenv("SHOAL_WORKSPACE", "default")
}

func runBatch(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append(args, "--client-config", filepath.Join(t.TempDir(), "none.yaml"))
	code := cli.Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// Azure's verbs end to end over the real API: create an endpoint and a
// deployment from Azure's YAML (the code folder uploaded), invoke on a
// local folder (uploaded) and find the job with list-jobs; mistakes are
// refused naming the field.
func TestBatchEndpointCommands(t *testing.T) {
	batchServer(t)
	admin := os.Getenv("SHOAL_TOKEN")
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"endpoint.yml": "$schema: https://azuremlschemas.azureedge.net/latest/batchEndpoint.schema.json\nname: digits\ndescription: scores digits\nauth_mode: aad_token\n",
		"deployment.yml": `$schema: https://azuremlschemas.azureedge.net/latest/modelBatchDeployment.schema.json
name: torch-dpl
endpoint_name: digits
type: model
model: azureml:digits-model@latest
code_configuration:
  code: code
  scoring_script: batch_driver.py
compute: azureml:cpu
resources:
  instance_count: 2
settings:
  max_concurrency_per_instance: 2
  mini_batch_size: 10
  output_action: append_row
  output_file_name: predictions.csv
  retry_settings:
    max_retries: 3
    timeout: 30
  error_threshold: -1
  logging_level: info
`,
		"code/batch_driver.py": "def init():\n    pass\n\ndef run(mini_batch):\n    return [p for p in mini_batch]\n",
		"data/a.txt":           "1\n",
		"data/b.txt":           "2\n",
	})
	if out, errOut, code := runBatch(t, "batch-endpoint", "create", "-f", filepath.Join(dir, "endpoint.yml")); code != 0 || !strings.Contains(out, "digits") {
		t.Fatalf("endpoint create: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code := runBatch(t, "batch-deployment", "create", "-f", filepath.Join(dir, "deployment.yml")); code != 0 || !strings.Contains(out, "torch-dpl") {
		t.Fatalf("deployment create: exit %d: %s %s", code, out, errOut)
	}
	out, errOut, code := runBatch(t, "batch-deployment", "show", "torch-dpl", "--endpoint-name", "digits", "-o", "json")
	var dep struct {
		CodeConfiguration struct{ Code string } `json:"code_configuration"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &dep) != nil || !strings.HasPrefix(dep.CodeConfiguration.Code, "sha256:") {
		t.Fatalf("deployment show: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code = runBatch(t, "batch-deployment", "list", "--endpoint-name", "digits"); code != 0 || !strings.Contains(out, "torch-dpl") {
		t.Errorf("deployment list: exit %d: %s %s", code, out, errOut)
	}
	out, errOut, code = runBatch(t, "batch-endpoint", "show", "--name", "digits", "-o", "json")
	if code != 0 || !strings.Contains(out, `"deployment_name": "torch-dpl"`) {
		t.Errorf("the first deployment is the default: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code = runBatch(t, "batch-endpoint", "update", "--name", "digits", "--set", "description=new words"); code != 0 || !strings.Contains(out, "new words") {
		t.Errorf("update: exit %d: %s %s", code, out, errOut)
	}
	out, errOut, code = runBatch(t, "batch-endpoint", "invoke", "--name", "digits", "--input", filepath.Join(dir, "data"), "-o", "json")
	var j struct {
		Name   string
		Inputs map[string]struct{ Path, Type string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &j) != nil || !strings.HasPrefix(j.Inputs["input_data"].Path, "sha256:") || j.Inputs["input_data"].Type != "uri_folder" {
		t.Fatalf("invoke on a local folder: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code = runBatch(t, "batch-endpoint", "list-jobs", "digits"); code != 0 || !strings.Contains(out, j.Name) {
		t.Errorf("list-jobs: exit %d: %s %s", code, out, errOut)
	}
	out, errOut, code = runBatch(t, "batch-endpoint", "create-token", "digits", "--expires-in-days", "7", "-o", "json")
	var tok struct{ Token, Scope string }
	if code != 0 || json.Unmarshal([]byte(out), &tok) != nil || tok.Token == "" || tok.Scope != "workspaces/default/batchendpoints/digits" {
		t.Fatalf("create-token: exit %d: %s %s", code, out, errOut)
	}
	// The token invokes, and does nothing else.
	t.Setenv("SHOAL_TOKEN", tok.Token)
	if out, errOut, code = runBatch(t, "batch-endpoint", "invoke", "-n", "digits", "--input", "azureml://datastores/workspaceblobstore/paths/x/"); code != 0 {
		t.Errorf("invoke with the invoke token: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code = runBatch(t, "batch-endpoint", "list"); code == 0 || !strings.Contains(errOut, "may only invoke") {
		t.Errorf("list with the invoke token: exit %d: %s %s", code, out, errOut)
	}
	t.Setenv("SHOAL_TOKEN", admin)
	if out, errOut, code = runBatch(t, "batch-endpoint", "invoke", "-n", "digits", "--input", filepath.Join(dir, "data"), "--deployment-name", "tf-dpl"); code == 0 || !strings.Contains(errOut, "tf-dpl") {
		t.Errorf("invoke naming a deployment not there: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code = runBatch(t, "batch-endpoint", "invoke", "-n", "digits", "--input", filepath.Join(dir, "missing")); code == 0 || !strings.Contains(errOut, "input") {
		t.Errorf("invoke on a folder not there: exit %d: %s %s", code, out, errOut)
	}
	bad := strings.Replace(readFile(t, filepath.Join(dir, "deployment.yml")), "mini_batch_size: 10", "mini_batch_size: ten", 1)
	writeTree(t, dir, map[string]string{"bad.yml": bad})
	if out, errOut, code = runBatch(t, "batch-deployment", "create", "-f", filepath.Join(dir, "bad.yml")); code == 0 || !strings.Contains(errOut, "settings.mini_batch_size") {
		t.Errorf("a bad mini_batch_size: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code = runBatch(t, "batch-deployment", "delete", "torch-dpl", "--endpoint-name", "digits"); code != 0 {
		t.Errorf("deployment delete: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code = runBatch(t, "batch-endpoint", "delete", "digits", "--yes"); code != 0 {
		t.Errorf("endpoint delete: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code = runBatch(t, "batch-endpoint", "list"); code != 0 || strings.Contains(out, "digits") {
		t.Errorf("list after delete: exit %d: %s %s", code, out, errOut)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
