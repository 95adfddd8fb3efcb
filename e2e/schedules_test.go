package e2e_test

import (
	"strings"
	"testing"
	"time"
)

// scheduleView is what `shoal schedule show` prints, the fields the test
// reads.
type scheduleView struct {
	Name      string `json:"name"`
	IsEnabled bool   `json:"is_enabled"`
	CreatedBy string `json:"created_by"`
	CreateJob struct {
		Type string `json:"type"`
	} `json:"create_job"`
	Status struct {
		NextFireTime *time.Time `json:"next_fire_time"`
		LastJob      string     `json:"last_job"`
		Fires        int        `json:"fires"`
		LastMessage  string     `json:"last_message"`
	} `json:"status"`
}

// A schedule created from Azure's YAML beside a job file whose code
// folder is uploaded: show gives the next fire time; trigger runs a job
// that completes with the schedule's expressions replaced; list, disable
// and delete work; a schedule whose job file is invalid is refused at
// create naming the field, and nothing is stored.
func TestScheduleCreateTriggerDelete(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	createCluster(t, s, "sched-cluster", "--min-instances", "0", "--max-instances", "1")
	dir := t.TempDir()
	write := dirWriter(t, dir)
	write("src/hello.sh", "echo \"scheduled $1 at $2\"\n")
	write("job.yml", `$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
type: command
code: ./src
command: sh hello.sh ${{name}} ${{creation_context.trigger_time}}
compute: azureml:sched-cluster
`)
	sched := write("schedule.yml", `$schema: https://azuremlschemas.azureedge.net/latest/schedule.schema.json
name: nightly
trigger:
  type: cron
  expression: "0 2 * * *"
  time_zone: W. Europe Standard Time
create_job:
  job: ./job.yml
  tags:
    from: schedule
`)
	created := runJSON[scheduleView](t, s.env, "schedule", "create", "-f", sched, "-o", "json")
	if created.Name != "nightly" || !created.IsEnabled || created.CreateJob.Type != "command" || created.Status.NextFireTime == nil {
		t.Fatalf("created = %+v", created)
	}
	j := runJSON[jobView](t, s.env, "schedule", "trigger", "-n", "nightly", "-o", "json")
	if !strings.HasPrefix(j.Name, "nightly-") {
		t.Fatalf("triggered job %q, want nightly-<time>", j.Name)
	}
	waitJob(t, s, j.Name, 60*time.Second, "Completed")
	if log := jobLog(t, s, j.Name); !strings.Contains(log, "scheduled "+j.Name+" at ") {
		t.Errorf("the job's log %q does not show its name replaced", log)
	}
	shown := runJSON[scheduleView](t, s.env, "schedule", "show", "nightly", "-o", "json")
	if shown.Status.LastJob != j.Name || shown.Status.Fires != 1 || !strings.Contains(shown.Status.LastMessage, j.Name) {
		t.Errorf("show after trigger = %+v", shown.Status)
	}
	if table := mustRun(t, s.env, "schedule", "list", "-o", "table"); !strings.Contains(table, "nightly") {
		t.Errorf("list table:\n%s", table)
	}
	if off := runJSON[scheduleView](t, s.env, "schedule", "disable", "-n", "nightly", "-o", "json"); off.IsEnabled || off.Status.NextFireTime != nil {
		t.Errorf("disabled = %+v", off)
	}

	// An invalid job file is refused at create, naming the field.
	write("bad.yml", "type: command\ncompute: azureml:sched-cluster\n")
	bad := write("bad-schedule.yml", "name: broken\ntrigger: {type: cron, expression: \"0 2 * * *\"}\ncreate_job: ./bad.yml\n")
	if _, stderr, code := run(t, s.env, "schedule", "create", "-f", bad); code == 0 || !strings.Contains(stderr, "command") {
		t.Errorf("an invalid job file: exit %d, %s", code, stderr)
	}
	// Six fields are refused naming trigger.expression.
	six := write("six.yml", "name: six\ntrigger: {type: cron, expression: \"0 0 2 * * *\"}\ncreate_job: ./job.yml\n")
	if _, stderr, code := run(t, s.env, "schedule", "create", "-f", six); code == 0 || !strings.Contains(stderr, "trigger.expression") {
		t.Errorf("six fields: exit %d, %s", code, stderr)
	}
	mustRun(t, s.env, "schedule", "delete", "-n", "nightly")
	if list := runJSON[[]scheduleView](t, s.env, "schedule", "list", "-o", "json"); len(list) != 0 {
		t.Errorf("after delete: %+v", list)
	}
}
