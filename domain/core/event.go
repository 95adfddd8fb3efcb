package core

import "time"

// Event kinds recorded in a resource's event log.
const (
	EventCreated      = "created"
	EventUpdated      = "updated"
	EventDeleting     = "deleting"
	EventDeleted      = "deleted"
	EventProvisioned  = "provisioned"
	EventFailed       = "failed"
	EventScaled       = "scaled"
	EventPreempted    = "preempted"
	EventQuotaBlocked = "quota_blocked"
	// EventBudget records a budget crossing 50, 80 or 100 %.
	EventBudget = "budget"
	// EventBudgetBlocked records scale-up stopped by a reached budget.
	EventBudgetBlocked = "budget_blocked"
	// EventGangReleased records a gang's nodes released together for not
	// coming up within the location's gang timeout, and scale-up for the
	// gang held back while its backoff runs.
	EventGangReleased = "gang_released"
	// EventGPUUtilization is a sample of a job's GPUs' utilisation.
	EventGPUUtilization = "gpu_utilization"

	// Job events the notifier reads (the job state machine's codes): a
	// job's end, whichever path ended it (a rank's report, a pipeline's
	// or sweep's last child, a cancel before it started, outputs that
	// could not be registered).
	EventJobCompleted = "completed"
	EventJobFailed    = "failed"
	EventJobCanceled  = "canceled"
	// EventQueuedTooLong records, once per job, that it has waited in the
	// queue longer than the server's threshold, with its wait reason.
	EventQueuedTooLong = "queued_too_long"
	// EventGPUUnderutilized records, once per job and window, that a
	// running job's GPUs stayed under the threshold for the whole window.
	EventGPUUnderutilized = "gpu_underutilized"
	// EventNodeLost records a compute's node lost (its lease expired).
	EventNodeLost = "node_lost"
	// EventProvisioningStuck records, once per node, a node provisioning
	// longer than the server's threshold.
	EventProvisioningStuck = "provisioning_stuck"
	// EventIdleShutdownSoon records that an instance will be stopped for
	// idleness soon (the warning before the stop).
	EventIdleShutdownSoon = "idle_shutdown_soon"
	// EventScaleWindow records a cluster's scale window changing its
	// effective min_instances/max_instances.
	EventScaleWindow = "scale_window"
	// EventScheduleFired records a job schedule's firing: the job it
	// submitted, a missed firing caught up, or why it was skipped.
	EventScheduleFired = "schedule_fired"
)

// Resource types an event can be about.
const (
	ResourceCompute = "compute"
	ResourceJob     = "job"
	// ResourceBudget names a budget's events (by its name, scope/period).
	ResourceBudget = "budget"
	// ResourceSchedule names a job schedule's events.
	ResourceSchedule = "schedule"
)

// EventAppender records events in a transaction, at its time; the
// store's transaction is one.
type EventAppender interface {
	Now() time.Time
	AppendEvent(e *Event) error
}

// Event is one entry in a resource's log: what happened, when, who did it
// and why. Reasons are data: the API, CLI and studio show them as written.
type Event struct {
	ID           int64     `json:"id"`
	Time         time.Time `json:"time"`
	Workspace    string    `json:"workspace"`
	ResourceType string    `json:"resource_type"`
	ResourceName string    `json:"resource_name"`
	Kind         string    `json:"kind"`
	Actor        string    `json:"actor"`
	Reason       string    `json:"reason"`
}

// EventFilter selects events; empty fields match everything.
type EventFilter struct {
	Workspace    string
	ResourceType string
	ResourceName string
	// AfterID keeps events with a larger ID, for following a log.
	AfterID int64
	// Following reads the log as its follower does, by ID (with AfterID,
	// from 0 on): only events committed, with their IDs, none that the
	// reading transaction appended and has not written yet (a follower
	// that saw those would see them again once committed). AfterID > 0
	// implies it.
	Following bool
	// Since keeps events at or after a time (zero: all): a compute's log
	// starts at its creation, so that one deleted and created again under
	// its name does not show the old one's events as its own.
	Since time.Time
	// Limit caps the number returned (0: no cap).
	Limit int
}
