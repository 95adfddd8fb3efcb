package job

import "strconv"

// A pipeline or a sweep is a parent job: it never runs anything itself
// and holds no compute. Its control loop (control/pipelines,
// control/sweeps) submits its children as ordinary command jobs, which
// the scheduler and autoscaler place like any other, and follows them;
// the parent's document keeps what it decided (which step or trial is
// which child, the outputs passed on, the best trial).

// PipelineStepStatus is a pipeline's step as its parent records it.
type PipelineStepStatus struct {
	// Name is the step's key under jobs:.
	Name string `json:"name"`
	// Job is the child job's name once submitted.
	Job string `json:"job,omitempty"`
	// Status is the child's status, NotStarted before it is submitted
	// (and for a step that will never run), Skipped never: a step that
	// will not run stays NotStarted with a Reason.
	Status string `json:"status"`
	// Reason says why a step waits or did not run ("waits for prep",
	// "prep failed").
	Reason string `json:"reason,omitempty"`
	// Outputs are the step's outputs once it completed: output name →
	// the artifact the next steps download.
	Outputs map[string]string `json:"outputs,omitempty"`
	// DependsOn lists the steps whose outputs it reads.
	DependsOn []string `json:"depends_on,omitempty"`
}

// SweepTrialStatus is a sweep's trial as its parent records it.
type SweepTrialStatus struct {
	// Index is the trial's number, from 0 in the order started.
	Index int `json:"index"`
	// Job is the child job's name.
	Job string `json:"job"`
	// Parameters are the hyperparameters it was given.
	Parameters map[string]any `json:"parameters"`
	// Status is the child's status.
	Status string `json:"status"`
	// Metric is the last value of the primary metric it logged, and
	// Intervals how many values it logged.
	Metric    *float64 `json:"metric,omitempty"`
	Intervals int      `json:"intervals,omitempty"`
	// EarlyTerminated names the policy that cancelled it (a typed code:
	// BanditSlack, BelowMedian, TruncationSelection) and Reason says why
	// in words.
	EarlyTerminated string `json:"early_terminated,omitempty"`
	Reason          string `json:"reason,omitempty"`
}

// IsParent tells whether a job is a pipeline or a sweep.
func (j *Job) IsParent() bool { return j.Pipeline != nil || j.Sweep != nil }

// PipelineChildName is the name of a pipeline's step's child job:
// deterministic, so that a control loop that submits it again after a
// crash finds the one it submitted (submission is idempotent by name).
func PipelineChildName(parent, step string) string { return parent + "-" + step }

// SweepChildName is the name of a sweep's trial index's child job.
func SweepChildName(parent string, index int) string {
	return parent + "-trial-" + strconv.Itoa(index)
}
