package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pipelineView is what `shoal job show -o json` prints of a pipeline.
type pipelineView struct {
	Name          string `json:"name"`
	Type          string `json:"type"`
	Status        string `json:"status"`
	StatusReason  string `json:"status_reason"`
	ParentJobName string `json:"parent_job_name"`
	Steps         []struct {
		Name   string `json:"name"`
		Job    string `json:"job"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	} `json:"steps"`
	Outputs map[string]struct {
		Path string `json:"path"`
	} `json:"outputs"`
}

func (v pipelineView) step(t *testing.T, name string) (job, status, reason string) {
	t.Helper()
	for _, s := range v.Steps {
		if s.Name == name {
			return s.Job, s.Status, s.Reason
		}
	}
	t.Fatalf("pipeline %s has no step %s: %+v", v.Name, name, v.Steps)
	return "", "", ""
}

// pipelineFiles writes the three steps' programs, the train component
// and the pipeline documents into a folder and returns it. prep writes
// rows to its output folder, train (a command component of its own
// file) sums them into a model file, score reads the model and prints
// the score: each step sees only what the one before it produced.
func pipelineFiles(t *testing.T) string {
	t.Helper()
	return writeFiles(t, map[string]string{
		"src/prep.py": `import os, sys
rows, out = int(sys.argv[1]), sys.argv[2]
with open(os.path.join(out, "rows.txt"), "w") as f:
    f.write("\n".join(str(i) for i in range(1, rows + 1)))
print("prep wrote", rows, "rows")
`,
		"src/train.py": `import os, sys
data, model = sys.argv[1], sys.argv[2]
total = sum(int(l) for l in open(os.path.join(data, "rows.txt")))
open(os.path.join(model, "model.txt"), "w").write(str(total))
print("train summed", total)
`,
		"src/score.py": `import os, sys
print("score", int(open(os.path.join(sys.argv[1], "model.txt")).read()) * 2)
`,
		"train.yml": `$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
name: train_sum
version: 1
type: command
inputs:
  data:
    type: uri_folder
outputs:
  model:
    type: uri_folder
code: ./src
command: python3 train.py ${{inputs.data}} ${{outputs.model}}
`,
		"pipeline.yml": `$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
display_name: prep-train-score
settings:
  default_compute: azureml:cpu
inputs:
  rows: 5
outputs:
  final_model:
    type: uri_folder
jobs:
  prep:
    type: command
    code: ./src
    command: python3 prep.py ${{inputs.rows}} ${{outputs.data}}
    inputs:
      rows: ${{parent.inputs.rows}}
    outputs:
      data:
        type: uri_folder
  train:
    type: command
    component: ./train.yml
    inputs:
      data: ${{parent.jobs.prep.outputs.data}}
    outputs:
      model: ${{parent.outputs.final_model}}
  score:
    type: command
    code: ./src
    command: python3 score.py ${{inputs.model}}
    inputs:
      model:
        type: uri_folder
        path: ${{parent.jobs.train.outputs.model}}
`,
		// broken fails, alone runs beside it, after reads what broken
		// would have made: with continue_on_step_failure, alone
		// completes and after never runs.
		"failing.yml": `type: pipeline
settings:
  default_compute: azureml:cpu
  continue_on_step_failure: true
jobs:
  broken:
    type: command
    command: echo breaking; exit 3
    outputs:
      data:
        type: uri_folder
  alone:
    type: command
    command: echo alone ran
  after:
    type: command
    command: ls ${{inputs.data}}
    inputs:
      data: ${{parent.jobs.broken.outputs.data}}
`,
		"long.yml": `type: pipeline
settings:
  default_compute: azureml:cpu
jobs:
  slow:
    type: command
    command: sleep 300
    outputs:
      out:
        type: uri_folder
  next:
    type: command
    command: ls ${{inputs.data}}
    inputs:
      data: ${{parent.jobs.slow.outputs.out}}
  nothing:
    type: command
    command: sleep 300
`,
	})
}

func showPipeline(t *testing.T, s *server, name string) pipelineView {
	t.Helper()
	return runJSON[pipelineView](t, s.env, "job", "show", "-n", name, "-o", "json")
}

// Azure's pipeline shape, end to end on a local cluster: prep → train (a
// component of its own file) → score, data passed by outputs; a failing
// step with continue_on_step_failure; a cancel that cascades; and the
// malformed documents refused naming their path.
func TestPipelineJobs(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	createCluster(t, s, "cpu", "--max-instances", "2", "--idle-time-before-scale-down", "60")
	dir := pipelineFiles(t)

	t.Run("three steps pass data by outputs", func(t *testing.T) {
		p := runJSON[pipelineView](t, s.env, "job", "create", "-f", filepath.Join(dir, "pipeline.yml"), "-o", "json")
		if p.Type != "pipeline" || p.Status != "Running" {
			t.Fatalf("the pipeline as created: %+v", p)
		}
		waitJob(t, s, p.Name, 3*time.Minute, "Completed", "Failed", "Canceled")
		v := showPipeline(t, s, p.Name)
		if v.Status != "Completed" {
			t.Fatalf("pipeline ended %s: %s %+v", v.Status, v.StatusReason, v.Steps)
		}
		for _, step := range []string{"prep", "train", "score"} {
			job, status, _ := v.step(t, step)
			if status != "Completed" || job != p.Name+"-"+step {
				t.Errorf("step %s: job %q status %s", step, job, status)
			}
			child := runJSON[pipelineView](t, s.env, "job", "show", "-n", job, "-o", "json")
			if child.ParentJobName != p.Name {
				t.Errorf("step %s's job names parent %q, want %q", step, child.ParentJobName, p.Name)
			}
		}
		// 1+2+3+4+5 = 15, doubled by score.
		if log := jobLog(t, s, p.Name+"-score"); !strings.Contains(log, "score 30") {
			t.Errorf("score's log lacks the score of train's model:\n%s", log)
		}
		if out := v.Outputs["final_model"].Path; !strings.HasPrefix(out, "sha256:") {
			t.Errorf("the pipeline's output final_model is %q, want train's model artifact", out)
		}
		if out := mustRun(t, s.env, "job", "stream", "-n", p.Name); !strings.Contains(out, "step score: Completed (job "+p.Name+"-score)") || !strings.Contains(out, "pipeline Completed") {
			t.Errorf("job stream of the pipeline:\n%s", out)
		}
		table := mustRun(t, s.env, "job", "show", "-n", p.Name, "-o", "table")
		for _, want := range []string{"prep", "train", "score", p.Name + "-train"} {
			if !strings.Contains(table, want) {
				t.Errorf("job show -o table lacks %q:\n%s", want, table)
			}
		}
	})

	t.Run("a failing step with continue_on_step_failure", func(t *testing.T) {
		p := runJSON[pipelineView](t, s.env, "job", "create", "-f", filepath.Join(dir, "failing.yml"), "-o", "json")
		waitJob(t, s, p.Name, 3*time.Minute, "Completed", "Failed", "Canceled")
		v := showPipeline(t, s, p.Name)
		if v.Status != "Failed" {
			t.Errorf("pipeline ended %s, want Failed", v.Status)
		}
		if _, st, _ := v.step(t, "broken"); st != "Failed" {
			t.Errorf("broken: %s", st)
		}
		if _, st, _ := v.step(t, "alone"); st != "Completed" {
			t.Errorf("alone ran beside the failing step: %s, want Completed", st)
		}
		if job, st, reason := v.step(t, "after"); job != "" || st != "NotStarted" || !strings.Contains(reason, "broken failed") {
			t.Errorf("after: job %q status %s reason %q, want never started because broken failed", job, st, reason)
		}
	})

	t.Run("cancel cascades", func(t *testing.T) {
		p := runJSON[pipelineView](t, s.env, "job", "create", "-f", filepath.Join(dir, "long.yml"), "-o", "json")
		waitFor(t, 2*time.Minute, "the slow step to run", func() (bool, string) {
			v := showPipeline(t, s, p.Name)
			_, st, _ := v.step(t, "slow")
			return st == "Running", st
		})
		mustRun(t, s.env, "job", "cancel", "-n", p.Name, "-o", "none")
		waitJob(t, s, p.Name, 2*time.Minute, "Canceled", "Completed", "Failed")
		v := showPipeline(t, s, p.Name)
		if v.Status != "Canceled" {
			t.Errorf("the pipeline ended %s, want Canceled", v.Status)
		}
		for _, step := range []string{"slow", "nothing"} {
			if _, st, _ := v.step(t, step); st != "Canceled" {
				t.Errorf("step %s: %s, want Canceled", step, st)
			}
		}
		if job, st, _ := v.step(t, "next"); job != "" || st != "NotStarted" {
			t.Errorf("next: job %q %s, want never started", job, st)
		}
	})

	// Issue 35: a step that declares a uri_folder output and leaves it
	// empty, read by the next step, kept the pipeline Running for good
	// ("0 of 2 steps completed") and failed every controller pass.
	t.Run("an output folder left empty is passed on empty", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "empty.yml")
		doc := `type: pipeline
settings: {default_compute: azureml:cpu}
jobs:
  a:
    command: echo writing nothing to ${{outputs.o}}
    outputs: {o: {type: uri_folder}}
  b:
    command: test -d ${{inputs.i}} && test -z "$(ls -A ${{inputs.i}})" && echo got-an-empty-folder
    inputs: {i: '${{parent.jobs.a.outputs.o}}'}
`
		if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		p := runJSON[pipelineView](t, s.env, "job", "create", "-f", f, "-o", "json")
		waitJob(t, s, p.Name, 3*time.Minute, "Completed", "Failed", "Canceled")
		v := showPipeline(t, s, p.Name)
		if v.Status != "Completed" {
			t.Fatalf("pipeline ended %s: %s %+v", v.Status, v.StatusReason, v.Steps)
		}
		if log := jobLog(t, s, p.Name+"-b"); !strings.Contains(log, "got-an-empty-folder") {
			t.Errorf("b's log does not show an empty input folder:\n%s", log)
		}
	})

	t.Run("malformed pipelines refused naming the path", func(t *testing.T) {
		for _, c := range []struct{ name, doc, field string }{
			{"cycle", "type: pipeline\nsettings: {default_compute: azureml:cpu}\njobs:\n  a:\n    command: ls ${{inputs.x}}\n    inputs: {x: '${{parent.jobs.b.outputs.o}}'}\n    outputs: {o: {type: uri_folder}}\n  b:\n    command: ls ${{inputs.x}}\n    inputs: {x: '${{parent.jobs.a.outputs.o}}'}\n    outputs: {o: {type: uri_folder}}\n", "jobs.a.inputs.x"},
			{"unknown step", "type: pipeline\njobs:\n  train:\n    command: ls ${{inputs.data}}\n    inputs: {data: '${{parent.jobs.prep.outputs.data}}'}\n", "jobs.train.inputs.data"},
			{"unbound parent input", "type: pipeline\njobs:\n  train:\n    command: echo ${{inputs.lr}}\n    inputs: {lr: '${{parent.inputs.lr}}'}\n", "jobs.train.inputs.lr"},
			{"unknown output", "type: pipeline\njobs:\n  prep:\n    command: echo hi\n  train:\n    command: ls ${{inputs.data}}\n    inputs: {data: '${{parent.jobs.prep.outputs.nope}}'}\n", "jobs.train.inputs.data"},
		} {
			f := filepath.Join(t.TempDir(), "p.yml")
			if err := os.WriteFile(f, []byte(c.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			stderr, _ := mustFail(t, s.env, "job", "create", "-f", f)
			if !strings.Contains(stderr, c.field) {
				t.Errorf("%s: the refusal does not name %s:\n%s", c.name, c.field, stderr)
			}
		}
	})
}
