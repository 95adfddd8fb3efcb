package openapi

import (
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/schedule"
)

// The native routes of job schedules (issue 39), kept beside apiDocs,
// which grows with every kind.
func init() {
	const p = "/api/v1/workspaces/{ws}/schedules"
	for k, v := range map[string]opDoc{
		"GET " + p:                      {summary: "List the workspace's job schedules, each with its next fire time", out: list[schedule.JobSchedule]{}},
		"GET " + p + "/{name}":          {summary: "Show a job schedule: its trigger, job, next fire time, last job and last message", out: schedule.JobSchedule{}},
		"PUT " + p + "/{name}":          {summary: "Create (201) or update (200) a job schedule from Azure's schedule YAML keys (create_job a job document or azureml:<job>); the job is checked, not submitted; the caller needs jobs/write too, as the firings run as them", in: schedule.JobSchedule{}, out: schedule.JobSchedule{}, status: 201},
		"DELETE " + p + "/{name}":       {summary: "Delete a job schedule (the jobs it submitted stay)", status: 204},
		"POST " + p + "/{name}/enable":  {summary: "Enable a job schedule: it fires from now on (missed firings are not caught up)", out: schedule.JobSchedule{}},
		"POST " + p + "/{name}/disable": {summary: "Disable a job schedule: it no longer fires", out: schedule.JobSchedule{}},
		"POST " + p + "/{name}/trigger": {summary: "Fire a job schedule now: submit its job at once as the caller (who needs jobs/write too)", out: job.Job{}, status: 201},
	} {
		apiDocs[k] = v
	}
}
