package e2e_test

import (
	"strings"
	"testing"
)

// Parallel components and steps through the real server and CLI:
// `component create` registers a type: parallel component (its task's
// code uploaded), shows it with its settings; a pipeline whose parallel
// step names it is accepted, and one whose inline parallel step breaks a
// rule is refused naming the step's field before anything runs. (The
// run of a parallel job, driver and ledger, is tested end to end with
// the parts that run it.)
func TestParallelComponentsCLI(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{})
	dir := t.TempDir()
	write := dirWriter(t, dir)
	write("src/score.py", "def init():\n    pass\n\ndef run(mini_batch):\n    return mini_batch\n")
	write("data/a.txt", "a\n")
	const component = `$schema: https://azuremlschemas.azureedge.net/latest/parallelComponent.schema.json
name: score_files
version: 1
type: parallel
inputs:
  data: {type: uri_folder}
outputs:
  rows: {type: uri_file}
input_data: ${{inputs.data}}
mini_batch_size: "2"
max_concurrency_per_instance: 2
logging_level: warn
task:
  type: run_function
  code: ./src
  entry_script: score.py
  environment: {image: python:3.12}
  append_row_to: ${{outputs.rows}}
`
	file := write("score.yml", component)
	if v := strings.TrimSpace(mustRun(t, s.env, "component", "create", "-f", file, "--query", "version", "-o", "tsv")); v != "1" {
		t.Fatalf("version = %q, want the file's 1", v)
	}
	shown := mustRun(t, s.env, "component", "show", "-n", "score_files", "--version", "1", "-o", "json")
	for _, want := range []string{`"type": "parallel"`, `"entry_script": "score.py"`, `"logging_level": "WARNING"`, `"code": "sha256:`, `SHOAL_PARALLEL_DRIVER`} {
		if !strings.Contains(shown, want) {
			t.Errorf("component show lacks %s:\n%s", want, shown)
		}
	}
	pipeline := write("pipeline.yml", `type: pipeline
settings: {default_compute: azureml:cpu-cluster}
jobs:
  score:
    type: parallel
    component: azureml:score_files:1
    inputs:
      data: {type: uri_folder, path: ./data}
    resources: {instance_count: 2}
`)
	if _, stderr, code := run(t, s.env, "job", "create", "-f", pipeline, "-n", "par1", "-o", "none"); code != 0 {
		t.Fatalf("a pipeline with a parallel component step: exit %d: %s", code, stderr)
	}
	bad := write("bad.yml", `type: pipeline
settings: {default_compute: azureml:cpu-cluster}
jobs:
  score:
    type: parallel
    inputs:
      data: {type: uri_folder, path: ./data}
    input_data: ${{inputs.data}}
    task: {type: run_function, code: ./src, entry_script: ../../etc/score.py}
`)
	_, stderr, code := run(t, s.env, "job", "create", "-f", bad, "-n", "par2")
	if code == 0 || !strings.Contains(stderr, "jobs.score.task.entry_script") {
		t.Errorf("an entry script outside its code: exit %d, %q; want refused naming jobs.score.task.entry_script", code, stderr)
	}
}
