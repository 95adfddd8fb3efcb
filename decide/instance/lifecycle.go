// Package instance is the lifecycle of compute instances: the state
// machine that carries out start, stop and restart operations, notices a
// lost machine, and stops instances when they are idle or a schedule says
// so. Step is pure — it takes what the controller read and the time, and
// says what to do — so every rule is tested on a fake clock; the server's
// controller (control.Controller) reads the store, calls Step and carries
// out the result. Idle rules live in instance/idle, schedules in
// instance/schedule.
package instance

import (
	"fmt"
	"time"

	"github.com/shoal-ml/shoal/decide/schedule"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
)

// Pending steps of an instance (shoal.InstanceStatus.Pending).
const (
	PendingStart = "start"
	PendingStop  = "stop"
)

// Config tunes the lifecycle.
type Config struct {
	// IdleMinute is how long one minute of idle time lasts: a minute,
	// unless shortened to rehearse idle shutdown.
	IdleMinute time.Duration
	// WarnBefore is how long before an idle shutdown the user is warned
	// (an event they can answer with `postpone-shutdown`); default 5 idle
	// minutes.
	WarnBefore time.Duration
}

func (c Config) withDefaults() Config {
	if c.IdleMinute <= 0 {
		c.IdleMinute = time.Minute
	}
	if c.WarnBefore <= 0 {
		c.WarnBefore = 5 * c.IdleMinute
	}
	return c
}

// Input is one instance as the controller sees it.
type Input struct {
	// Compute is the instance: spec and stored state (Compute.Instance).
	Compute *compute.Compute
	// Node is the instance's own node, nil when it has none.
	Node *node.Node
	// Slots are its job slots (nodes running its jobs).
	Slots []*node.Node
	// Report is what the node's agent last said, nil when it has not.
	Report *node.InstanceReport
	// ProxyLastRequest is when the application proxy last carried a
	// request to the instance.
	ProxyLastRequest time.Time
	// Schedules are the instance's compiled schedules, in the order of
	// the spec.
	Schedules []*schedule.Schedule
}

// Output is what to do for one instance.
type Output struct {
	// Status is the instance's new state (write it when it changed).
	Status compute.InstanceStatus
	// Provision asks for the instance's node; Release for its node and
	// job slots to be released; Delete for the instance to be removed
	// (it is deleting and has nothing left).
	Provision, Release, Delete bool
	// Events to record.
	Events []Event
}

// Event is something to record in the instance's event log.
type Event struct{ Kind, Reason string }

// MissedFiringMaxAge bounds how late a schedule's firing may still be
// carried out: a firing missed while the server was down runs once at
// start-up if it is at most this old, and is dropped (with an event)
// otherwise.
const MissedFiringMaxAge = schedule.MissedFiringMaxAge

// Step decides what to do for one instance at now.
func Step(in Input, now time.Time, cfg Config) Output {
	cfg = cfg.withDefaults()
	c := in.Compute
	out := Output{Status: *c.Instance}
	st := &out.Status
	emit := func(kind, format string, args ...any) {
		out.Events = append(out.Events, Event{Kind: kind, Reason: fmt.Sprintf(format, args...)})
	}
	hasNodes := in.Node != nil || len(in.Slots) > 0

	if c.ProvisioningState == compute.ProvisioningDeleting {
		if st.State != compute.InstanceDeleting {
			st.State, st.Pending = compute.InstanceDeleting, ""
			emit("instance_deleting", "deleting: stopping every process of the instance and removing its home")
		}
		out.Release, out.Delete = hasNodes, !hasNodes
		return out
	}

	scheduleStep(in, st, now, emit)

	switch st.Pending {
	case PendingStop:
		if hasNodes {
			out.Release = true
			return out
		}
		if st.PendingOperation == compute.OperationRestart {
			st.Pending, st.State = PendingStart, compute.InstanceRestarting
			out.Provision = true
			emit("instance_stopped", "restart: stopped; starting again")
			return out
		}
		st.State = compute.InstanceStopped
		st.LastOperation = &compute.LastOperation{OperationName: st.PendingOperation, OperationTime: now, OperationStatus: compute.OperationSucceeded, OperationTrigger: st.PendingTrigger}
		emit("instance_stopped", "stopped (trigger %s): every process of the instance ended; its home is kept", st.PendingTrigger)
		clearPending(st)
		st.IdleSince, st.ShutdownWarnedAt, st.ShutdownPostponedUntil = nil, nil, nil
		return out
	case PendingStart:
		startStep(in, st, now, &out, emit)
		return out
	}

	switch st.State {
	case compute.InstanceRunning, compute.InstanceSettingUp, compute.InstanceSetupFailed:
		if in.Node == nil || in.Node.State == node.NodeUnusable || in.Node.State == node.NodePreempted {
			why := "its node is gone"
			if in.Node != nil && in.Node.StateReason != "" {
				why = in.Node.StateReason
			}
			st.State = compute.InstanceUnusable
			out.Release = hasNodes
			emit("instance_unusable", "the instance's machine was lost (%s); restart it (shoal compute restart -n %s)", why, c.Name)
			return out
		}
		if r := in.Report; r != nil {
			switch {
			case r.Phase == node.InstancePhaseSetupFailed && st.State != compute.InstanceSetupFailed:
				st.State, st.SetupError = compute.InstanceSetupFailed, r.SetupError
				emit("instance_setup_failed", "setup failed: %s (see shoal compute logs -n %s --setup)", r.SetupError, c.Name)
			case r.Phase == node.InstancePhaseRunning && st.State == compute.InstanceSettingUp:
				st.State = compute.InstanceRunning
			}
		}
		if st.State == compute.InstanceRunning {
			idleStep(in, st, now, cfg, emit)
		}
	}
	return out
}

// startStep carries a start (or the second half of a restart) forward:
// provision the node, wait for it to join and for setup to finish.
func startStep(in Input, st *compute.InstanceStatus, now time.Time, out *Output, emit func(string, string, ...any)) {
	c := in.Compute
	if in.Node == nil {
		out.Provision = true
		if st.State == compute.InstanceStopped {
			st.State = compute.InstanceStarting
		}
		return
	}
	switch in.Node.State {
	case node.NodeUnusable, node.NodePreempted, node.NodeLeaving:
		failStart(st, now, fmt.Sprintf("its node failed: %s", in.Node.StateReason))
		out.Release = true
		emit("instance_start_failed", "%s failed: node %s: %s", st.LastOperation.OperationName, in.Node.ID, in.Node.StateReason)
		return
	case node.NodePreparing:
		return
	}
	r := in.Report
	switch {
	case r == nil || r.Phase == "" || r.Phase == node.InstancePhaseSettingUp:
		if st.State != compute.InstanceSettingUp {
			st.State = compute.InstanceSettingUp
			emit("instance_setting_up", "node %s joined: setting up (setup scripts, SSH, applications)", in.Node.ID)
		}
	case r.Phase == node.InstancePhaseRunning:
		st.State = compute.InstanceRunning
		st.LastOperation = &compute.LastOperation{OperationName: st.PendingOperation, OperationTime: now, OperationStatus: compute.OperationSucceeded, OperationTrigger: st.PendingTrigger}
		emit("instance_running", "running on node %s (%s, trigger %s)", in.Node.ID, st.PendingOperation, st.PendingTrigger)
		for _, a := range r.Apps {
			if a.Error != "" && !a.Running {
				// Said once per start: the instance runs without it.
				emit("application_unavailable", "application %s does not run: %s", a.Name, a.Error)
			}
		}
		clearPending(st)
		st.SetupError = ""
		t := now
		st.IdleSince, st.ShutdownWarnedAt, st.ShutdownPostponedUntil = &t, nil, nil
		if r.CreationScriptDone {
			st.CreationScriptDone = true
		}
	case r.Phase == node.InstancePhaseSetupFailed:
		st.State, st.SetupError = compute.InstanceSetupFailed, r.SetupError
		status := compute.OperationStartFailed
		if st.PendingOperation == compute.OperationCreate {
			status = compute.OperationCreateFailed
		}
		st.LastOperation = &compute.LastOperation{OperationName: st.PendingOperation, OperationTime: now, OperationStatus: status, OperationTrigger: st.PendingTrigger}
		emit("instance_setup_failed", "setup failed: %s (see shoal compute logs -n %s --setup); restart or delete the instance", r.SetupError, c.Name)
		clearPending(st)
	}
}

// FailStart records a start that could not be carried out (no capacity,
// no quota): the instance is Stopped again (CreateFailed for a create)
// with the reason in last_operation's status and the error kept.
func FailStart(st *compute.InstanceStatus, now time.Time, reason string) {
	failStart(st, now, reason)
}

func failStart(st *compute.InstanceStatus, now time.Time, reason string) {
	op := st.PendingOperation
	status, state := compute.OperationStartFailed, compute.InstanceStopped
	switch op {
	case compute.OperationCreate:
		status, state = compute.OperationCreateFailed, compute.InstanceCreateFailed
	case compute.OperationRestart:
		status = compute.OperationRestartFailed
	}
	st.State, st.SetupError = state, reason
	st.LastOperation = &compute.LastOperation{OperationName: op, OperationTime: now, OperationStatus: status, OperationTrigger: st.PendingTrigger}
	clearPending(st)
}

func clearPending(st *compute.InstanceStatus) {
	st.Pending, st.PendingOperation, st.PendingTrigger = "", "", ""
}

// RequestStop records a stop (or the stop half of a restart) triggered by
// trigger; it is carried out by the next Step.
func RequestStop(st *compute.InstanceStatus, op, trigger string, now time.Time) {
	st.Pending, st.PendingOperation, st.PendingTrigger = PendingStop, op, trigger
	st.State = compute.InstanceStopping
	if op == compute.OperationRestart {
		st.State = compute.InstanceRestarting
	}
	st.LastOperation = &compute.LastOperation{OperationName: op, OperationTime: now, OperationStatus: compute.OperationInProgress, OperationTrigger: trigger}
}

// RequestStart records a start of a stopped instance triggered by trigger.
func RequestStart(st *compute.InstanceStatus, trigger string, now time.Time) {
	st.State, st.Pending, st.PendingOperation, st.PendingTrigger = compute.InstanceStarting, PendingStart, compute.OperationStart, trigger
	st.LastOperation = &compute.LastOperation{OperationName: compute.OperationStart, OperationTime: now, OperationStatus: compute.OperationInProgress, OperationTrigger: trigger}
}
