package schedule

import (
	"encoding/json"
	"time"
)

// JobSchedule is a workspace's schedule (Azure's schedule YAML, `shoal
// schedule`, ARM's `schedules`): each time its trigger fires it submits
// one job (CreateJob) or invokes a batch endpoint (InvokeBatchEndpoint),
// as the user who created or last updated it.
type JobSchedule struct {
	// Name is unique in the workspace (compared case-insensitively).
	Name        string            `json:"name"`
	Workspace   string            `json:"workspace,omitempty"`
	DisplayName string            `json:"display_name,omitempty"`
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	Properties  map[string]string `json:"properties,omitempty"`
	// Trigger says when it fires (cron or recurrence, in a time zone).
	Trigger *Trigger `json:"trigger"`
	// CreateJob is the job each firing submits (YAML `create_job`);
	// exactly one of CreateJob and InvokeBatchEndpoint is set.
	CreateJob *CreateJob `json:"create_job,omitempty"`
	// InvokeBatchEndpoint is the batch endpoint each firing invokes
	// (Azure's InvokeBatchEndpoint action).
	InvokeBatchEndpoint *InvokeBatchEndpoint `json:"invoke_batch_endpoint,omitempty"`
	// IsEnabled is false after `shoal schedule disable`: the trigger does
	// not fire (a disabled schedule's missed firings are not caught up
	// when it is enabled again).
	IsEnabled bool `json:"is_enabled"`

	// CreatedBy is the principal that created the schedule; UpdatedBy the
	// one that last changed it, whose rights each firing uses (a firing
	// is refused, and says so, once they no longer may submit jobs in
	// the workspace).
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedOn time.Time `json:"created_on,omitempty"`
	UpdatedBy string    `json:"updated_by,omitempty"`
	UpdatedOn time.Time `json:"updated_on,omitempty"`
	// UpdatedByPrincipal is the principal ID of UpdatedBy ("user:alice",
	// "admin"), whose rights are checked at each firing.
	UpdatedByPrincipal string `json:"updated_by_principal,omitempty"`
	// Version is incremented by every write (the ETag).
	Version int64 `json:"version,omitempty"`

	// Status is what the server keeps about its firings (read-only).
	Status ScheduleStatus `json:"status"`
}

// CreateJob is a schedule's `create_job`, resolved when the schedule is
// created or updated: Job is the whole job document each firing submits
// (the job file's YAML as JSON, its code and local inputs uploaded, the
// overrides given beside `job:` merged in), so that a schedule whose job
// is invalid is refused at create, never at its first firing.
type CreateJob struct {
	// Job is the job document, as `POST …/jobs` takes it. A firing names
	// the job it submits (see FiredJobName) and replaces the expressions
	// ${{name}} and ${{creation_context.trigger_time}} in its strings.
	Job json.RawMessage `json:"job"`
	// SourceJob is the existing job `create_job` named
	// (`azureml:<job>`), when it named one: Job is that job's document
	// with the overrides merged.
	SourceJob string `json:"source_job,omitempty"`
	// SourceWorkspace is the workspace an ARM id in `azureml:<id>` named
	// (…/workspaces/<ws>/jobs/<job>), "" when it named none: the
	// service refuses one that is not the schedule's. Never stored.
	SourceWorkspace string `json:"-"`
	// Type is the job's type (command, pipeline, sweep, parallel), for
	// lists.
	Type string `json:"type,omitempty"`
	// Overrides are the keys given beside `job: azureml:<job>`, which
	// the service merges into that job's document (MergeJob) when the
	// schedule is created; never stored.
	Overrides json.RawMessage `json:"-"`
}

// InvokeBatchEndpoint is a schedule's batch endpoint invocation (YAML
// `invoke_batch_endpoint`, ARM `actionType: InvokeBatchEndpoint`).
type InvokeBatchEndpoint struct {
	// Endpoint is the batch endpoint's name.
	Endpoint string `json:"endpoint"`
	// Deployment is the deployment to run; empty: the endpoint's default
	// at each firing.
	Deployment string `json:"deployment,omitempty"`
	// Input is the data to score (a data asset `azureml:name:version`, a
	// datastore path or a URL), as `shoal batch-endpoint invoke --input`.
	Input string `json:"input,omitempty"`
	// InputType is uri_folder (default) or uri_file.
	InputType string `json:"input_type,omitempty"`
	// ExperimentName groups the jobs the firings start.
	ExperimentName string `json:"experiment_name,omitempty"`
	// OutputPath is where the predictions go (a datastore path); empty:
	// the job's default output.
	OutputPath string `json:"output_path,omitempty"`
}

// ScheduleStatus is what the server records about a schedule's firings.
type ScheduleStatus struct {
	// LastFireTime is the trigger time of the last firing acted on (a
	// job submitted, or the firing skipped with a reason): a firing at or
	// before it is never acted on again, across restarts and failovers.
	LastFireTime *time.Time `json:"last_fire_time,omitempty"`
	// LastJob is the job the last firing submitted.
	LastJob string `json:"last_job,omitempty"`
	// Fires counts the jobs the schedule submitted.
	Fires int64 `json:"fires,omitempty"`
	// LastMessage says what the last firing did, such as "fired late: the
	// 02:00 firing was missed while no server ran; started at 02:14" or
	// why it was skipped.
	LastMessage string `json:"last_message,omitempty"`
	// NextFireTime is when the trigger fires next (computed on read; nil
	// when disabled or past end_time).
	NextFireTime *time.Time `json:"next_fire_time,omitempty"`
}

// Action kinds, as Azure's ARM names them (`action.actionType`).
const (
	ActionCreateJob           = "CreateJob"
	ActionInvokeBatchEndpoint = "InvokeBatchEndpoint"
)

// ActionType is the schedule's action as ARM names it.
func (s *JobSchedule) ActionType() string {
	if s.InvokeBatchEndpoint != nil {
		return ActionInvokeBatchEndpoint
	}
	return ActionCreateJob
}

// MaxJobSchedules bounds a workspace's schedules.
const MaxJobSchedules = 200
