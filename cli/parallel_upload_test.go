package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// A parallel step's task.code, its environment's conda file and its
// local inputs are uploaded relative to the pipeline file, inline or in
// a component file (relative to that file); the server gets artifacts.
func TestParallelStepUploadsTaskFiles(t *testing.T) {
	rec, srv := newSubmitRecorder(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"data/a.csv":        "1\n",
		"script/score.py":   "def init(): pass\ndef run(b): return b\n",
		"env/conda.yml":     "dependencies: [python=3.11]\n",
		"comp/src/score.py": "def init(): pass\ndef run(b): return b\n",
		"comp/parallel.yml": `type: parallel
name: score
inputs: {data: {type: uri_folder}}
input_data: ${{inputs.data}}
task: {type: run_function, code: ./src, entry_script: score.py, environment: {image: python:3.12}}
`,
		"pipeline.yml": `type: pipeline
settings: {default_compute: azureml:cpu-cluster}
jobs:
  inline:
    type: parallel
    inputs:
      data: {type: uri_folder, path: ./data}
    input_data: ${{inputs.data}}
    task:
      type: run_function
      code: ./script
      entry_script: score.py
      environment: {image: python:3.12, conda_file: ./env/conda.yml}
  from_file:
    type: parallel
    component: ./comp/parallel.yml
    inputs:
      data: {type: uri_folder, path: ./data}
`})
	if _, stderr, err := runCLI(t, srv, newFakeClock(), "job", "create", "-f", filepath.Join(dir, "pipeline.yml"), "-n", "p1"); err != nil {
		t.Fatalf("create: %v\n%s", err, stderr)
	}
	if len(rec.docs) != 1 {
		t.Fatalf("submitted %d documents", len(rec.docs))
	}
	// inline: code, conda file, data; from_file: code, data.
	if rec.uploads < 4 {
		t.Errorf("%d uploads, want the code folders and the data", rec.uploads)
	}
	for _, path := range [][]string{
		{"jobs", "inline", "task", "code"},
		{"jobs", "inline", "inputs", "data", "path"},
		{"jobs", "from_file", "component", "task", "code"},
		{"jobs", "from_file", "inputs", "data", "path"},
	} {
		if got := inputPath(t, rec.docs[0], path...); got != recordedArtifact {
			t.Errorf("%s sent as %q, want the uploaded artifact", strings.Join(path, "."), got)
		}
	}
}

// A task.code that does not exist is named with the step's path before
// anything is submitted.
func TestParallelStepMissingCode(t *testing.T) {
	rec, srv := newSubmitRecorder(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"pipeline.yml": `type: pipeline
settings: {default_compute: azureml:cpu-cluster}
jobs:
  score:
    type: parallel
    inputs: {data: {type: uri_folder, path: "azureml://datastores/d/paths/x/"}}
    input_data: ${{inputs.data}}
    task: {type: run_function, code: ./nope, entry_script: score.py}
`})
	_, stderr, err := runCLI(t, srv, newFakeClock(), "job", "create", "-f", filepath.Join(dir, "pipeline.yml"), "-n", "p1")
	if err == nil || len(rec.docs) != 0 {
		t.Fatalf("submitted %d documents, err %v", len(rec.docs), err)
	}
	if msg := err.Error() + stderr; !strings.Contains(msg, "jobs.score: task.code") {
		t.Errorf("error %q does not name jobs.score: task.code", msg)
	}
}
