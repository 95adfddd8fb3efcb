package e2e_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// trialPy is a sweep trial: it logs score = -|lr - 0.3| through MLflow's
// REST API (as testdata/sweep/src/train.py does, with the standard
// library) and writes its lr into its model folder, so that the step
// after the sweep shows whose model it got.
const trialPy = `import json, os, sys, time, urllib.request
lr, model = float(sys.argv[1]), sys.argv[2]
open(os.path.join(model, "lr.txt"), "w").write(sys.argv[1])
base = os.environ["MLFLOW_TRACKING_URI"].rstrip("/") + "/api/2.0/mlflow/"
run = os.environ["MLFLOW_RUN_ID"]
body = {"run_id": run, "run_uuid": run, "key": "score", "value": -abs(lr - 0.3), "timestamp": int(time.time() * 1000), "step": 0}
req = urllib.request.Request(base + "runs/log-metric", data=json.dumps(body).encode(), method="POST",
    headers={"Authorization": "Bearer " + os.environ["MLFLOW_TRACKING_TOKEN"], "Content-Type": "application/json"})
urllib.request.urlopen(req).read()
print("trial lr", lr)
`

// Azure's pipeline_with_hyperparameter_sweep and
// pipeline_with_pipeline_component shapes, end to end on a local
// cluster: a sweep step over a trial component file, whose best trial's
// model the next step reads; a step of type pipeline running a pipeline
// component file of two steps, whose output the next step reads; and a
// setting Azure accepts without knowing it (a misspelt
// default_datestore), kept and reported in the job's events.
func TestPipelineSweepAndComponentSteps(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	createCluster(t, s, "cpu", "--max-instances", "3", "--idle-time-before-scale-down", "60")
	dir := writeFiles(t, map[string]string{
		"trial-src/trial.py": trialPy,
		"trial.yml": `$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: trial
inputs:
  lr: {type: number, default: 0.5}
outputs:
  model: {type: uri_folder}
code: ./trial-src
command: python3 trial.py ${{inputs.lr}} ${{outputs.model}}
`,
		"sweep.yml": `$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu
jobs:
  tune:
    type: sweep
    trial: ./trial.yml
    outputs:
      model:
    sampling_algorithm: grid
    search_space:
      lr: {type: choice, values: [0.1, 0.3, 0.7]}
    objective: {goal: maximize, primary_metric: score}
    limits: {max_total_trials: 3, max_concurrent_trials: 3, timeout: 600}
  use:
    type: command
    command: echo best lr $(cat ${{inputs.model}}/lr.txt)
    inputs:
      model: ${{parent.jobs.tune.outputs.model}}
`,
		"sub/make.yml": `type: command
name: make
inputs:
  n: {type: integer}
outputs:
  out: {type: uri_folder}
command: echo $(( ${{inputs.n}} * 10 )) > ${{outputs.out}}/n.txt
`,
		"sub/pipe.yml": `$schema: https://azuremlschemas.azureedge.net/latest/pipelineComponent.schema.json
type: pipeline
name: make_and_add
inputs:
  n: {type: integer, default: 1}
outputs:
  result: {type: uri_folder}
jobs:
  make:
    type: command
    component: ./make.yml
    inputs:
      n: ${{parent.inputs.n}}
  add:
    type: command
    command: echo $(( $(cat ${{inputs.x}}/n.txt) + 1 )) > ${{outputs.y}}/n.txt
    inputs:
      x: ${{parent.jobs.make.outputs.out}}
    outputs:
      y: ${{parent.outputs.result}}
`,
		"nested.yml": `$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu
  default_datestore: azureml:workspaceblobstore
inputs:
  n: 4
jobs:
  inner:
    type: pipeline
    component: ./sub/pipe.yml
    inputs:
      n: ${{parent.inputs.n}}
  show:
    type: command
    command: echo result $(cat ${{inputs.r}}/n.txt)
    inputs:
      r: ${{parent.jobs.inner.outputs.result}}
`,
	})

	t.Run("a sweep step's best trial feeds the next step", func(t *testing.T) {
		p := runJSON[pipelineView](t, s.env, "job", "create", "-f", filepath.Join(dir, "sweep.yml"), "-o", "json")
		waitJob(t, s, p.Name, 4*time.Minute, "Completed", "Failed", "Canceled")
		v := showPipeline(t, s, p.Name)
		if v.Status != "Completed" {
			t.Fatalf("pipeline ended %s: %s %+v", v.Status, v.StatusReason, v.Steps)
		}
		tune, _, _ := v.step(t, "tune")
		sw := getSweep(t, s, tune)
		if len(sw.Trials) != 3 || sw.BestChildRunID == "" {
			t.Fatalf("the sweep step's sweep: best %q, trials %s", sw.BestChildRunID, describeTrials(sw.Trials))
		}
		if log := jobLog(t, s, p.Name+"-use"); !strings.Contains(log, "best lr 0.3") {
			t.Errorf("use's log lacks the best trial's lr (0.3):\n%s", log)
		}
	})

	t.Run("a pipeline component's steps join the pipeline", func(t *testing.T) {
		p := runJSON[pipelineView](t, s.env, "job", "create", "-f", filepath.Join(dir, "nested.yml"), "-o", "json")
		waitJob(t, s, p.Name, 3*time.Minute, "Completed", "Failed", "Canceled")
		v := showPipeline(t, s, p.Name)
		if v.Status != "Completed" {
			t.Fatalf("pipeline ended %s: %s %+v", v.Status, v.StatusReason, v.Steps)
		}
		for _, step := range []string{"inner-make", "inner-add", "show"} {
			if job, st, _ := v.step(t, step); st != "Completed" || job != p.Name+"-"+step {
				t.Errorf("step %s: job %q %s", step, job, st)
			}
		}
		// n = 4 → make writes 40 → add writes 41.
		if log := jobLog(t, s, p.Name+"-show"); !strings.Contains(log, "result 41") {
			t.Errorf("show's log lacks the component's result 41:\n%s", log)
		}
		events := mustRun(t, s.env, "job", "events", "-n", p.Name)
		if !strings.Contains(events, "settings.default_datestore") || !strings.Contains(events, "ignored") {
			t.Errorf("the job's events do not say default_datestore was ignored:\n%s", events)
		}
	})
}
