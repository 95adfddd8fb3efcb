package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
)

// submitRecorder is the job API's edge for the CLI under test: it keeps
// the documents submitted and answers uploads with an artifact ID; what
// the server does with them is the service's tests'.
type submitRecorder struct {
	mu      sync.Mutex
	docs    []map[string]any
	uploads int
}

const recordedArtifact = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func newSubmitRecorder(t *testing.T) (*submitRecorder, *httptest.Server) {
	r := &submitRecorder{}
	f := newFakeAPI(t, newFakeClock())
	f.handle("POST /api/v1/workspaces/default/artifacts", func(req *http.Request) (int, any) {
		_, _ = io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.uploads++
		r.mu.Unlock()
		return http.StatusCreated, map[string]string{"id": recordedArtifact}
	})
	f.handle("PUT /api/v1/workspaces/default/jobs/{name}", func(req *http.Request) (int, any) {
		var doc map[string]any
		if err := json.NewDecoder(req.Body).Decode(&doc); err != nil {
			t.Errorf("submitted body: %v", err)
		}
		r.mu.Lock()
		r.docs = append(r.docs, doc)
		r.mu.Unlock()
		return http.StatusCreated, &job.Job{JobSpec: job.JobSpec{Name: req.PathValue("name")}, Status: job.JobQueued}
	})
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return r, srv
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func inputPath(t *testing.T, doc map[string]any, keys ...string) string {
	t.Helper()
	var v any = doc
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("no %s in %v", strings.Join(keys, "."), doc)
		}
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// `shoal job create -f` sends asset references, datastore URIs and URLs
// as written, uploading only the local path.
func TestJobCreateSendsRemoteInputsUnchanged(t *testing.T) {
	rec, srv := newSubmitRecorder(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"data/a.csv": "1\n", "job.yml": `command: cat ${{inputs.url}} ${{inputs.asset}} ${{inputs.ds}} ${{inputs.local}} ${{inputs.model}}
compute: azureml:cpu-cluster
inputs:
  url: {type: uri_file, path: "https://azuremlexamples.blob.core.windows.net/datasets/iris.csv"}
  asset: {type: uri_folder, path: "azureml:sampledata@latest", mode: download}
  ds: {type: mltable, path: "azureml://datastores/workspaceblobstore/paths/tables/iris/", mode: eval_mount}
  model: {type: mlflow_model, path: "azureml:my-model:2"}
  local: {type: uri_folder, path: ./data}
outputs:
  out: {type: uri_folder, path: "azureml://datastores/workspaceblobstore/paths/${{name}}/out/"}
`})
	if _, stderr, err := runCLI(t, srv, newFakeClock(), "job", "create", "-f", filepath.Join(dir, "job.yml"), "-n", "j1"); err != nil {
		t.Fatalf("create: %v\n%s", err, stderr)
	}
	if len(rec.docs) != 1 || rec.uploads != 1 {
		t.Fatalf("submitted %d documents with %d uploads, want 1 and 1 (the local folder)", len(rec.docs), rec.uploads)
	}
	doc := rec.docs[0]
	for name, want := range map[string]string{
		"url":   "https://azuremlexamples.blob.core.windows.net/datasets/iris.csv",
		"asset": "azureml:sampledata@latest",
		"ds":    "azureml://datastores/workspaceblobstore/paths/tables/iris/",
		"model": "azureml:my-model:2",
		"local": recordedArtifact,
	} {
		if got := inputPath(t, doc, "inputs", name, "path"); got != want {
			t.Errorf("inputs.%s.path sent as %q, want %q", name, got, want)
		}
	}
	if got := inputPath(t, doc, "outputs", "out", "path"); got != "azureml://datastores/workspaceblobstore/paths/${{name}}/out/" {
		t.Errorf("output path sent as %q", got)
	}
}

// A pipeline step that runs a component file uploads its own local
// inputs (Azure's pipelines-with-components examples bind ./data so) and
// sends its remote ones as written.
func TestPipelineComponentStepUploadsItsLocalInputs(t *testing.T) {
	rec, srv := newSubmitRecorder(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"data/a.csv": "1\n",
		"comp/component.yml": `name: score
type: command
inputs:
  data: {type: uri_folder}
  model: {type: custom_model}
command: ls ${{inputs.data}} ${{inputs.model}}
`,
		"pipeline.yml": `type: pipeline
settings: {default_compute: azureml:cpu-cluster}
jobs:
  score:
    component: ./comp/component.yml
    inputs:
      data: {type: uri_folder, path: ./data}
      model: {type: custom_model, path: "azureml://datastores/models/paths/m/"}
`})
	if _, stderr, err := runCLI(t, srv, newFakeClock(), "job", "create", "-f", filepath.Join(dir, "pipeline.yml"), "-n", "p1"); err != nil {
		t.Fatalf("create: %v\n%s", err, stderr)
	}
	if len(rec.docs) != 1 || rec.uploads != 1 {
		t.Fatalf("submitted %d documents with %d uploads, want 1 and 1", len(rec.docs), rec.uploads)
	}
	if got := inputPath(t, rec.docs[0], "jobs", "score", "inputs", "data", "path"); got != recordedArtifact {
		t.Errorf("the step's local input sent as %q, want the uploaded artifact", got)
	}
	if got := inputPath(t, rec.docs[0], "jobs", "score", "inputs", "model", "path"); got != "azureml://datastores/models/paths/m/" {
		t.Errorf("the step's datastore input sent as %q", got)
	}
}

// A job or a step of a type Shoal does not run is refused by the CLI
// with the server's sentence before any of its files is uploaded.
func TestJobCreateRefusesKindsNotRunBeforeUploading(t *testing.T) {
	rec, srv := newSubmitRecorder(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"data/train.csv": "1\n",
		"automl.yml":     "type: automl\ntask: classification\ntraining_data: {type: mltable, path: ./data}\n",
		"pipeline.yml":   "type: pipeline\ninputs:\n  d: {type: uri_folder, path: ./data}\njobs:\n  prep:\n    command: echo\n  train:\n    type: spark\n    entry: {file: a.py}\n",
	})
	for file, want := range map[string]string{"automl.yml": "Shoal does not run AutoML jobs", "pipeline.yml": "jobs.train.type"} {
		_, stderr, err := runCLI(t, srv, newFakeClock(), "job", "create", "-f", filepath.Join(dir, file))
		if err == nil || !strings.Contains(err.Error()+stderr, want) {
			t.Errorf("%s: %v %s; want a refusal with %q", file, err, stderr, want)
		}
	}
	if len(rec.docs) != 0 || rec.uploads != 0 {
		t.Errorf("submitted %d documents with %d uploads, want none", len(rec.docs), rec.uploads)
	}
}
