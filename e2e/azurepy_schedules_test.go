package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestAzurePythonSDKSchedules: azure-ai-ml 1.4.0's ml_client.schedules
// (testdata/azurepy/schedules.py) against `shoal server --tls`: a
// @dsl.pipeline under a CronTrigger created with begin_create_or_update,
// got, listed by list_view_type, disabled and enabled (PUTs of what the
// SDK read), a RecurrenceTrigger schedule created and deleted; then
// `shoal schedule trigger` fires the SDK's schedule and the pipeline job
// it submits completes, its step having run in the SDK's environment.
func TestAzurePythonSDKSchedules(t *testing.T) {
	t.Parallel()
	nb := startNotebookEnv(t, fastJobsConfig)
	createCluster(t, nb.s, "sched-sdk", "--max-instances", "1")
	text, steps := nb.run(t, "schedules.py", 6*time.Minute, "CLUSTER=sched-sdk")
	wantSteps(t, steps, map[string]map[string]any{
		"created":    {"name": "sdk-nightly", "enabled": true, "state": "Succeeded", "trigger": "CronTrigger", "expression": "0 2 * * *", "zone": "Pacific Standard Time", "job_type": "pipeline"},
		"got":        {"name": "sdk-nightly", "description": "nightly from the SDK"},
		"recurrence": {"name": "sdk-weekly", "frequency": "week", "interval": float64(1)},
		"disabled":   {"enabled": false},
		"enabled":    {"enabled": true},
	})
	for step, want := range map[string]string{
		"got":        "map[description:nightly from the SDK name:sdk-nightly step:got steps:[hello]]",
		"recurrence": "[monday friday]",
		"listed":     "map[all:[sdk-nightly sdk-weekly] enabled_only:[sdk-weekly] step:listed]",
		"deleted":    "map[left:[sdk-nightly] step:deleted]",
	} {
		if got := fmt.Sprint(steps[step]); !strings.Contains(got, want) {
			t.Errorf("step %s: %s, want %s", step, got, want)
		}
	}
	if t.Failed() {
		t.Fatalf("schedules.py's output:\n%s", text)
	}
	shown := runJSON[scheduleView](t, nb.s.env, "schedule", "show", "sdk-nightly", "-o", "json")
	if !shown.IsEnabled || shown.CreateJob.Type != "pipeline" || shown.Status.NextFireTime == nil {
		t.Errorf("shoal schedule show: %+v", shown)
	}
	j := runJSON[jobView](t, nb.s.env, "schedule", "trigger", "-n", "sdk-nightly", "-o", "json")
	if !strings.HasPrefix(j.Name, "sdk-nightly-") {
		t.Fatalf("triggered job %q, want sdk-nightly-<time>", j.Name)
	}
	waitJob(t, nb.s, j.Name, 4*time.Minute, "Completed")
}
