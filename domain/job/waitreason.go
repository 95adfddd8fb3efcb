package job

// WaitReason is why a queued job waits, as the leader's latest scheduler
// pass said. Only the leader schedules, while any server replica shows
// jobs: so it is stored, where every replica reads the same.
type WaitReason struct {
	Workspace string
	Job       string
	// Code is the machine-readable class of the reason (a
	// scheduler.ReasonCode, e.g. "waiting_behind"); programs read it,
	// never Message.
	Code string
	// Message is the human sentence the API shows as the job's
	// status_reason.
	Message string
}
