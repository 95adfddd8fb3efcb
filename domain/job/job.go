package job

import (
	"context"
	"time"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/job/interactive"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/domain/notify"
)

// Job statuses, Azure ML's names.
const (
	JobNotStarted      = "NotStarted"
	JobQueued          = "Queued"
	JobPreparing       = "Preparing"
	JobRunning         = "Running"
	JobFinalizing      = "Finalizing"
	JobCancelRequested = "CancelRequested"
	JobCompleted       = "Completed"
	JobFailed          = "Failed"
	JobCanceled        = "Canceled"
)

// JobTerminal reports whether a job status is final.
func JobTerminal(status string) bool {
	return status == JobCompleted || status == JobFailed || status == JobCanceled
}

// Queue priorities (queue_settings.priority) and their order.
const (
	PriorityLow    = "low"
	PriorityMedium = "medium"
	PriorityHigh   = "high"
)

// JobSpec is an Azure ML command job as written in YAML, with the
// snake_case keys. The CLI uploads local `code` and input paths and sends
// the spec with those replaced by artifact IDs ("sha256:<hex>").
type JobSpec struct {
	Name           string            `json:"name"`
	Type           string            `json:"type"`
	DisplayName    string            `json:"display_name,omitempty"`
	ExperimentName string            `json:"experiment_name,omitempty"`
	Description    string            `json:"description,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
	Command        string            `json:"command"`
	Code           string            `json:"code,omitempty"`
	// CodeAsset is the registered code version ("name:version") Code
	// was packed from, when the job named one (Azure's codeId): what
	// Azure's SDK reads back as the job's code.
	CodeAsset            string                `json:"code_asset,omitempty"`
	Environment          any                   `json:"environment,omitempty"`
	EnvironmentVariables map[string]string     `json:"environment_variables,omitempty"`
	Compute              string                `json:"compute"`
	Inputs               map[string]*JobInput  `json:"inputs,omitempty"`
	Outputs              map[string]*JobOutput `json:"outputs,omitempty"`
	Resources            *JobResources         `json:"resources,omitempty"`
	Distribution         *Distribution         `json:"distribution,omitempty"`
	Limits               *JobLimits            `json:"limits,omitempty"`
	QueueSettings        *QueueSettings        `json:"queue_settings,omitempty"`
	// Retries is how many times a job that failed on its own (non-zero
	// exit) is run again. Preemption and node loss never spend it. Default 0.
	Retries *int `json:"retries,omitempty"`
	// Identity is what the job's code acts as (identity.go); nil: its
	// compute's managed identities.
	Identity *JobIdentity `json:"identity,omitempty"`
	// NotificationSetting is who is mailed when the job ends (Azure's
	// notification_setting; control/notify sends it).
	NotificationSetting *notify.NotificationSetting `json:"notification_setting,omitempty"`
	// Services are the interactive applications the job asks for
	// (services.go), by name.
	Services map[string]*interactive.Service `json:"services,omitempty"`
	// Parallel makes the job a parallel job (parallel.go): its command
	// is ParallelCommand, and its input Parallel.InputData is split into
	// mini-batches its nodes share. nil for every other job.
	Parallel *ParallelSpec `json:"parallel,omitempty"`
}

// JobInput is a job's input: a literal value, or data at a path
// (package jobio holds inputs and outputs; the alias keeps callers).
type JobInput = jobio.Input

// JobOutput is a job's output (jobio.Output).
type JobOutput = jobio.Output

// JobResources are the resources a job asks for.
type JobResources struct {
	InstanceCount int    `json:"instance_count,omitempty"`
	InstanceType  string `json:"instance_type,omitempty"`
	ShmSize       string `json:"shm_size,omitempty"`
}

// Distribution types.
const (
	DistributionPyTorch    = "pytorch"
	DistributionMPI        = "mpi"
	DistributionTensorFlow = "tensorflow"
)

// Distribution configures a distributed job (distribution.go decodes
// and checks it): pytorch and mpi start ProcessCountPerInstance
// processes on each node; tensorflow starts WorkerCount workers and
// ParameterServerCount parameter servers spread evenly over the nodes.
type Distribution struct {
	Type                    string `json:"type"`
	ProcessCountPerInstance int    `json:"process_count_per_instance,omitempty"`
	WorkerCount             int    `json:"worker_count,omitempty"`
	ParameterServerCount    int    `json:"parameter_server_count,omitempty"`
}

// JobLimits bound a job.
type JobLimits struct {
	// Timeout is the maximum run time in seconds.
	Timeout int `json:"timeout,omitempty"`
}

// QueueSettings place a job in the queue.
type QueueSettings struct {
	JobTier  string `json:"job_tier,omitempty"`
	Priority string `json:"priority,omitempty"`
}

// Job is a submitted job with its status.
type Job struct {
	JobSpec

	Workspace string `json:"-"`
	ID        string `json:"id"`
	Status    string `json:"status"`
	// StatusReason says why a job is where it is: for a queued job, why it
	// waits (provisioning, max_instances, quota, behind other jobs).
	StatusReason string `json:"status_reason,omitempty"`
	// StatusReasonCode is, for a queued job, the code of StatusReason for
	// programs (the scheduler's: provisioning, at_max_instances,
	// budget_reached, quota_exceeded, waiting_behind, gang_incomplete,
	// no_nodes, compute_unavailable, compute_deleting); empty otherwise. Filled when the job
	// is read, never stored.
	StatusReasonCode string `json:"status_reason_code,omitempty"`
	// Cost is what the job's attempts cost so far (computed when the job
	// is read alone, never stored).
	Cost      *JobCost `json:"cost,omitempty"`
	CreatedBy string   `json:"created_by,omitempty"`
	// ResolvedEnvironment is what the job's environment field resolved
	// to at submit (an image, a build context, a conda file on an image),
	// kept so that a later change to a registered environment's latest
	// version does not change a job already submitted; nil for a job that
	// runs on the host.
	ResolvedEnvironment *asset.EnvironmentSpec `json:"resolved_environment,omitempty"`
	// CreatedByPrincipal is the submitter's principal ID: the job's workload
	// identity never gets more rights than it.
	CreatedByPrincipal string     `json:"created_by_principal,omitempty"`
	CreatedOn          time.Time  `json:"created_on"`
	StartTime          *time.Time `json:"start_time,omitempty"`
	EndTime            *time.Time `json:"end_time,omitempty"`
	// Seq is the submission order.
	Seq int64 `json:"-"`
	// AttemptCount counts attempts started; CurrentAttemptID names the live one.
	AttemptCount     int    `json:"attempt_count"`
	CurrentAttemptID string `json:"current_attempt_id,omitempty"`
	// FailedAttempts counts attempts that failed on their own; they spend Retries.
	FailedAttempts int `json:"failed_attempts"`
	// InfraRequeues counts attempts ended by preemption or node loss.
	InfraRequeues int    `json:"infra_requeues"`
	ExitCode      *int   `json:"exit_code,omitempty"`
	Error         string `json:"error,omitempty"`
	// ParentJobName names the pipeline or sweep that submitted this job
	// (a step or a trial); empty for a job submitted by a user.
	ParentJobName string `json:"parent_job_name,omitempty"`
	// Pipeline is a pipeline job's document (its components resolved),
	// Steps its steps' children; Sweep is a sweep job's document, Trials
	// its trials' children, BestChildRunID the best trial's job and
	// SweepSeed the seed its sampler draws from (drawn at submit when the
	// document gives none). A parent job has no compute of its own.
	Pipeline       *PipelineSpec         `json:"pipeline,omitempty"`
	Steps          []*PipelineStepStatus `json:"steps,omitempty"`
	Sweep          *SweepSpec            `json:"sweep,omitempty"`
	Trials         []*SweepTrialStatus   `json:"trials,omitempty"`
	BestChildRunID string                `json:"best_child_run_id,omitempty"`
	SweepSeed      int64                 `json:"sweep_seed,omitempty"`
	// ParallelProgress is, for a parallel job, where its mini-batches
	// stand (read from its ledger when the job is read alone, never
	// stored).
	ParallelProgress *ParallelProgress `json:"parallel_progress,omitempty"`
	// SpecHash identifies the submitted body, for idempotent submission.
	SpecHash string `json:"-"`
	Version  int64  `json:"-"`
}

// InstanceCount returns resources.instance_count, default 1.
func (s *JobSpec) InstanceCount() int {
	if s.Resources == nil || s.Resources.InstanceCount < 1 {
		return 1
	}
	return s.Resources.InstanceCount
}

// PriorityValue orders queue_settings.priority: high 3, medium 2, low 1;
// the default is medium.
func (s *JobSpec) PriorityValue() int {
	if s.QueueSettings != nil {
		switch s.QueueSettings.Priority {
		case PriorityHigh:
			return 3
		case PriorityLow:
			return 1
		}
	}
	return 2
}

// Attempt statuses.
const (
	AttemptPreparing = "Preparing"
	AttemptRunning   = "Running"
	AttemptCompleted = "Completed"
	AttemptFailed    = "Failed"
	AttemptCanceled  = "Canceled"
	AttemptPreempted = "Preempted"
	AttemptLost      = "Lost" // its node missed its lease
	AttemptTimedOut  = "TimedOut"
)

// AttemptTerminal reports whether an attempt status is final.
func AttemptTerminal(status string) bool {
	switch status {
	case AttemptCompleted, AttemptFailed, AttemptCanceled, AttemptPreempted, AttemptLost, AttemptTimedOut:
		return true
	}
	return false
}

// Attempt is one try of a job on a set of nodes (one per rank).
type Attempt struct {
	ID        string        `json:"id"`
	Workspace string        `json:"-"`
	JobName   string        `json:"job_name"`
	Number    int           `json:"number"`
	Status    string        `json:"status"`
	Ranks     []*RankStatus `json:"ranks"`
	// MasterAddr and MasterPort are rank 0's address for distributed jobs.
	MasterAddr string     `json:"master_addr,omitempty"`
	MasterPort int        `json:"master_port,omitempty"`
	CreatedOn  time.Time  `json:"created_on"`
	StartTime  *time.Time `json:"start_time,omitempty"`
	EndTime    *time.Time `json:"end_time,omitempty"`
	ExitCode   *int       `json:"exit_code,omitempty"`
	Reason     string     `json:"reason,omitempty"`
}

// RankStatus is the state of one rank of an attempt on its node.
type RankStatus struct {
	Rank      int        `json:"rank"`
	NodeID    string     `json:"node_id"`
	Status    string     `json:"status"`
	ExitCode  *int       `json:"exit_code,omitempty"`
	StartTime *time.Time `json:"start_time,omitempty"`
	EndTime   *time.Time `json:"end_time,omitempty"`
	Reason    string     `json:"reason,omitempty"`
	// Failure is the report's RankFailure, when the rank ended before any
	// of its processes ran.
	Failure RankFailure `json:"failure,omitempty"`
	// Services are the job's services on the rank's node, as its agent
	// last reported them.
	Services []interactive.ServiceInstance `json:"services,omitempty"`
}

// JobFilter selects jobs.
type JobFilter struct {
	Workspace string
	// Statuses, when set, keeps jobs in one of these statuses.
	Statuses []string
	// Compute, when set, keeps jobs of that compute (case-insensitive).
	Compute string
	Limit   int
}

// JobService manages jobs.
type JobService interface {
	// SubmitJob queues a job. Submission is idempotent by name: the same
	// name and body returns the existing job; a different body is
	// ECONFLICT. Returns EINVALID, ENOTFOUND (compute).
	SubmitJob(ctx context.Context, workspace string, spec *JobSpec) (*Job, bool, error)
	// FindJob returns a job. Returns ENOTFOUND.
	FindJob(ctx context.Context, workspace, name string) (*Job, error)
	// ListJobs returns jobs newest first.
	ListJobs(ctx context.Context, filter JobFilter) ([]*Job, error)
	// CancelJob requests cancellation. Returns ENOTFOUND.
	CancelJob(ctx context.Context, workspace, name string) (*Job, error)
	// ListAttempts returns a job's attempts, oldest first.
	ListAttempts(ctx context.Context, workspace, name string) ([]*Attempt, error)
}

// JobCost is a job's node-seconds and their price: each rank's run time on
// its node, at the node's size and tier price.
type JobCost struct {
	NodeSeconds float64 `json:"node_seconds"`
	USD         float64 `json:"usd"`
}

// RankFailure classifies a rank that ended before its processes ran, for
// the server to act on; the report's Reason says the same for people.
type RankFailure string
