package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
)

// A pipeline's local component file is read relative to the pipeline
// file and inlined, its code uploaded relative to the component's own
// file; an inline step's code is uploaded relative to the pipeline file;
// bindings and azureml: references are left alone; what comes out is a
// pipeline document the server accepts as it is.
func TestInlinePipelineComponents(t *testing.T) {
	srv, uploaded := artifactServer(t)

	dir := t.TempDir()
	write := fileWriter(t, dir)
	write("components/train/train.py", "print('train')\n")
	write("components/train.yml", `$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
name: train
version: 1
type: command
inputs:
  data: {type: uri_folder}
  epochs: {type: integer, default: 3}
outputs:
  model: {type: uri_folder}
code: ./train
environment: azureml:sklearn@latest
command: python train.py --data ${{inputs.data}} --epochs ${{inputs.epochs}} --model ${{outputs.model}}
`)
	write("src/prep.py", "print('prep')\n")
	write("data/raw.csv", "a,b\n1,2\n")
	write("pipeline.yml", `$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
inputs:
  raw: {type: uri_folder, path: ./data}
jobs:
  prep:
    command: python prep.py --raw ${{inputs.raw}} --out ${{outputs.clean}}
    code: ./src
    environment: azureml:sklearn:1
    inputs:
      raw: ${{parent.inputs.raw}}
    outputs:
      clean:
  train:
    component: ./components/train.yml
    inputs:
      data:
        path: ${{parent.jobs.prep.outputs.clean}}
        mode: download
  score:
    component: azureml:score@latest
    inputs:
      model: ${{parent.jobs.train.outputs.model}}
`)
	doc, spec := inlinedPipeline(t, srv.URL, dir)
	if n := uploaded(); n != 3 {
		t.Errorf("%d uploads, want 3 (the component's code, the step's code, the pipeline's input)", n)
	}
	train := spec.Jobs["train"]
	if train.Component == nil || train.Component.Name != "train" || train.Component.Version != "1" || !job.ValidateArtifactRef(train.Component.Code) {
		t.Errorf("train's component = %+v; want the file's, its code uploaded", train.Component)
	}
	if c := spec.Jobs["prep"].Component; c == nil || !job.ValidateArtifactRef(c.Code) {
		t.Errorf("prep = %+v; want its code uploaded", c)
	}
	if !job.ValidateArtifactRef(spec.Inputs["raw"].Path) {
		t.Errorf("the pipeline's input = %+v; want uploaded", spec.Inputs["raw"])
	}
	if s := spec.Jobs["score"]; s.ComponentRef != "azureml:score@latest" || s.Component != nil {
		t.Errorf("score = %+v; want its azureml: reference left for the server", s)
	}
	if in := train.Inputs["data"]; in.Bind != "${{parent.jobs.prep.outputs.clean}}" || in.Mode != "download" {
		t.Errorf("train's data = %+v; want the binding kept", in)
	}

	// A missing component file is named by its step.
	doc["jobs"].(map[string]any)["train"].(map[string]any)["component"] = "./nope.yml"
	if err := inlinePipelineComponents(t.Context(), client.NewClient(srv.URL, ""), "ws", dir, doc); err == nil || !strings.Contains(err.Error(), "jobs.train.component") {
		t.Errorf("a missing file: %v; want an error naming jobs.train.component", err)
	}
}

// artifactServer answers the CLI's artifact uploads with their digests,
// counting them.
func artifactServer(t *testing.T) (*httptest.Server, func() int) {
	var mu sync.Mutex
	uploads := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/artifacts") {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(r.Body)
		sum := sha256.Sum256(b)
		mu.Lock()
		uploads++
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]string{"id": "sha256:" + hex.EncodeToString(sum[:])})
	}))
	t.Cleanup(srv.Close)
	return srv, func() int {
		mu.Lock()
		defer mu.Unlock()
		return uploads
	}
}

// fileWriter writes files under dir, making their folders.
func fileWriter(t *testing.T, dir string) func(name, text string) {
	return func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// inlinedPipeline reads dir/pipeline.yml, inlines its files as `job
// create` does (uploading to the server at url), and decodes and checks
// what it would send as the server does.
func inlinedPipeline(t *testing.T, url, dir string) (map[string]any, *job.PipelineSpec) {
	t.Helper()
	doc, err := cmdutil.ReadYAMLDocument(filepath.Join(dir, "pipeline.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := inlinePipelineComponents(t.Context(), client.NewClient(url, ""), "ws", dir, doc); err != nil {
		t.Fatal(err)
	}
	raw, err := cmdutil.ToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := pipelinejob.DecodePipelineSpec(raw)
	if err == nil {
		err = pipelinejob.NormalizePipelineSpec(spec)
	}
	if err != nil {
		t.Fatalf("the inlined document: %v", err)
	}
	return doc, spec
}
