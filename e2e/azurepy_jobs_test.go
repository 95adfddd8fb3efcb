package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// Azure's own Python SDK (Debian's python3-azure: azure-ai-ml 1.4.0)
// submits jobs to `shoal server --tls` as a notebook does
// (testdata/azurepy/jobs.py): command() with an inline image and with a
// registered environment, get, list, begin_cancel and a .sweep() with
// early termination; Shoal's CLI then shows what
// the SDK submitted, through the same job path. The cluster's one node
// runs a job of the CLI's (on the host) the whole time, so that the
// SDK's jobs stay queued: what is checked is the submission, not the
// images (container runs are TestContainerJobs', on the same path).
func TestAzurePythonSDKJobs(t *testing.T) {
	t.Parallel()
	testenv.AzureML(t)
	s := startServer(t, serverOpts{Config: fastJobsConfig, Args: []string{"--tls"}, TLS: true})
	sp := runJSON[map[string]any](t, s.env, "sp", "create", "--name", "sdk-jobs", "-o", "json")
	mustRun(t, s.env, "role", "assign", "--sp", "sdk-jobs", "--role", "Contributor", "-o", "none")
	const cluster = "sdk-cpu"
	createCluster(t, s, cluster, "--size", "Standard_DS3_v2", "--max-instances", "1")
	busy := submitJob(t, s, writeJobFile(t, "command: sleep 600\ncompute: azureml:"+cluster+"\n"))
	waitJob(t, s, busy, 90*time.Second, "Running")

	// A pipeline submitted with the CLI, which the SDK reads back.
	pipe := submitJob(t, s, writeJobFile(t, `type: pipeline
settings:
  default_compute: azureml:`+cluster+`
jobs:
  make:
    type: command
    command: mkdir -p ${{outputs.data}}
    outputs:
      data:
        type: uri_folder
  use:
    type: command
    command: ls ${{inputs.data}}
    inputs:
      data: ${{parent.jobs.make.outputs.data}}
`))

	out, steps := runAzurePy(t, s, pyRun{script: "jobs.py", sp: sp, env: []string{"CLUSTER=" + cluster, "PIPELINE=" + pipe}})
	queued := func(step string) {
		t.Helper()
		if st := jsonStr(steps[step]["status"]); st != "Queued" && st != "NotStarted" {
			t.Errorf("step %s: status %q, want Queued (the node is busy)\n%s", step, st, out)
		}
	}
	inline, registered := jsonStr(steps["inline"]["name"]), jsonStr(steps["registered"]["name"])
	queued("inline")
	queued("registered")
	if got := steps["inline"]; !strings.Contains(jsonStr(got["environment"]), "CliV2AnonymousEnvironment") || jsonStr(got["compute"]) != cluster ||
		!strings.HasSuffix(jsonStr(got["studio"]), "/jobs/"+inline+"?workspace=default") || jsonStr(got["display_name"]) != "hello-sdk" {
		t.Errorf("inline: %v\n%s", got, out)
	}
	if got := steps["update"]; jsonStr(got["name"]) != inline || jsonStr(got["description"]) != "checked" || fmt.Sprint(got["tags"]) != "map[from:sdk reviewed:yes]" {
		t.Errorf("update: %v\n%s", got, out)
	}
	if got := steps["registered"]; !strings.Contains(jsonStr(got["environment"]), "sdk-job-env") || jsonStr(got["type"]) != "command" {
		t.Errorf("registered: %v\n%s", got, out)
	}
	if got := fmt.Sprint(steps["list"]["names"]); !strings.Contains(got, inline) || !strings.Contains(got, registered) || !strings.Contains(got, busy) {
		t.Errorf("list: %s", got)
	}
	if st := jsonStr(steps["cancel"]["status"]); st != "Canceled" {
		t.Errorf("cancel: %v", steps["cancel"])
	}
	if got := steps["sweep"]; jsonStr(got["type"]) != "sweep" || jsonStr(got["metric"]) != "acc" {
		t.Errorf("sweep: %v\n%s", got, out)
	}
	if got := steps["pipeline_get"]; jsonStr(got["type"]) != "pipeline" || fmt.Sprint(got["steps"]) != "[make use]" || jsonStr(got["compute"]) != cluster {
		t.Errorf("pipeline_get: %v\n%s", got, out)
	}
	if got := steps["sweep_get"]; jsonStr(got["type"]) != "sweep" || fmt.Sprint(got["space"]) != "[layers lr]" {
		t.Errorf("sweep_get: %v\n%s", got, out)
	}
	if got := fmt.Sprint(steps["list_all"]["names"]); !strings.Contains(got, jsonStr(steps["sweep"]["name"])) {
		t.Errorf("list after the sweep: %s", got)
	}

	// What the SDK submitted, as Shoal's CLI shows it.
	j := runJSON[map[string]any](t, s.env, "job", "show", "--name", inline, "-o", "json")
	if !strings.HasPrefix(jsonStr(j["environment"]), "azureml:CliV2AnonymousEnvironment:") || jsonStr(j["compute"]) != cluster ||
		jsonStr(j["command"]) != "echo hello ${{inputs.greeting}}" || jsonStr(j["experiment_name"]) != "sdk-jobs" {
		t.Errorf("job show %s: %v", inline, j)
	}
	if j := getJob(t, s, registered); j.Status != "Canceled" {
		t.Errorf("job show %s: %s", registered, j)
	}
	if sw := jsonStr(steps["sweep"]["name"]); sw != "" {
		if j := runJSON[map[string]any](t, s.env, "job", "show", "--name", sw, "-o", "json"); j["sweep"] == nil {
			t.Errorf("job show %s: %v", sw, j)
		}
	}
	audit := runJSON[[]map[string]any](t, s.env, "audit", "list", "--principal", "sp:sdk-jobs", "-o", "json")
	actions := map[string]int{}
	for _, a := range audit {
		actions[jsonStr(a["action"])+" "+jsonStr(a["outcome"])]++
	}
	if actions["jobs/write succeeded"] < 3 || actions["jobs/cancel/action succeeded"] < 1 {
		t.Errorf("audit of sp:sdk-jobs: %v", actions)
	}
	mustRun(t, s.env, "job", "cancel", "--name", busy, "-o", "none")
}
