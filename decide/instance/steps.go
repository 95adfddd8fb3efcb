package instance

import (
	"time"

	"github.com/shoal-ml/shoal/decide/instance/idle"
	"github.com/shoal-ml/shoal/decide/schedule"
	"github.com/shoal-ml/shoal/domain/compute"
)

// scheduleStep fires the instance's schedules: of the firings due since
// they were last checked, the latest one (of any schedule) is carried out,
// once. A firing missed while the server was down is carried out at
// start-up if it is at most MissedFiringMaxAge old; an older one is
// dropped with an event.
func scheduleStep(in Input, st *compute.InstanceStatus, now time.Time, emit func(string, string, ...any)) {
	if len(in.Schedules) == 0 {
		st.SchedulesCheckedAt = nil
		return
	}
	if st.SchedulesCheckedAt == nil {
		t := now
		st.SchedulesCheckedAt = &t
		return
	}
	last := *st.SchedulesCheckedAt
	if !now.After(last) {
		return
	}
	t := now
	st.SchedulesCheckedAt = &t
	f, ok := schedule.Decide(in.Schedules, last, now, MissedFiringMaxAge)
	if !ok {
		return
	}
	desc, at := f.Reason, f.At
	if f.Stale {
		emit("schedule_missed", "%s while the server was down, more than %s ago: not carried out", desc, MissedFiringMaxAge)
		return
	}
	late := ""
	if now.Sub(at) > 2*time.Minute {
		late = " (missed while the server was down; carried out once now)"
	}
	switch f.Action {
	case compute.ScheduleActionStop:
		if st.Pending == PendingStop {
			return
		}
		if p := st.ShutdownPostponedUntil; p != nil && now.Before(*p) {
			emit("schedule_postponed", "%s: stop skipped, the user postponed shutdown until %s", desc, p.UTC().Format(time.RFC3339))
			return
		}
		switch st.State {
		case compute.InstanceRunning, compute.InstanceSettingUp, compute.InstanceSetupFailed, compute.InstanceStarting,
			compute.InstanceCreating, compute.InstanceUnusable, compute.InstanceCreateFailed:
			RequestStop(st, compute.OperationStop, compute.TriggerSchedule, now)
			emit("schedule_fired", "%s%s: stopping", desc, late)
		default:
			emit("schedule_fired", "%s: nothing to do, the instance is %s", desc, st.State)
		}
	case compute.ScheduleActionStart:
		if st.State == compute.InstanceStopped && st.Pending == "" {
			RequestStart(st, compute.TriggerSchedule, now)
			emit("schedule_fired", "%s%s: starting", desc, late)
		} else {
			emit("schedule_fired", "%s: nothing to do, the instance is %s", desc, st.State)
		}
	}
}

// idleStep keeps a running instance's idle clock and shuts it down when
// it has been idle long enough.
func idleStep(in Input, st *compute.InstanceStatus, now time.Time, cfg Config, emit func(string, string, ...any)) {
	c := in.Compute
	p := idle.Policy{WarnBefore: cfg.WarnBefore, Minute: cfg.IdleMinute}
	if m := c.IdleTimeBeforeShutdownMinutes; m != nil {
		p.Minutes = *m
	}
	if c.IdleCPUPercentBelow != nil {
		p.CPUPercentBelow = *c.IdleCPUPercentBelow
	}
	prev := idle.State{}
	if st.IdleSince != nil {
		prev.IdleSince = *st.IdleSince
	}
	if st.ShutdownWarnedAt != nil {
		prev.WarnedAt = *st.ShutdownWarnedAt
	}
	if st.ShutdownPostponedUntil != nil {
		prev.PostponedUntil = *st.ShutdownPostponedUntil
	}
	next, d := idle.Evaluate(p, prev, Signals(in), now)
	since := next.IdleSince
	st.IdleSince = &since
	st.ShutdownWarnedAt = nil
	if !next.WarnedAt.IsZero() {
		w := next.WarnedAt
		st.ShutdownWarnedAt = &w
	}
	st.Activity, st.IdleActive = d.Activity, d.Active
	if d.Warn {
		emit("idle_shutdown_warning", "%s; postpone it with `shoal compute postpone-shutdown -n %s`", d.Reason, c.Name)
	}
	if d.Shutdown {
		RequestStop(st, compute.OperationStop, compute.TriggerIdleShutdown, now)
		emit("idle_shutdown", "%s: stopping", d.Reason)
	}
}

// Signals gathers the idle signals of an instance: what its agent
// reported, its job slots' jobs and its application proxy's traffic.
func Signals(in Input) idle.Signals {
	s := idle.Signals{ProxyLastRequest: in.ProxyLastRequest}
	for _, n := range in.Slots {
		if n.CurrentAttemptID != "" {
			s.RunningJobs = append(s.RunningJobs, n.CurrentJobName)
		}
	}
	r := in.Report
	if r == nil {
		return s
	}
	for _, k := range r.Kernels {
		s.Kernels = append(s.Kernels, idle.Kernel{ID: k.Name, Name: k.Name, ExecutionState: k.ExecutionState, LastActivity: k.LastActivity, Connections: k.Connections})
	}
	for _, t := range r.Terminals {
		s.Terminals = append(s.Terminals, idle.Terminal{Name: t.Name, LastActivity: t.LastActivity})
	}
	s.SSHSessions = r.SSHSessions
	if r.SSHLastActivity != nil {
		s.SSHLastActivity = *r.SSHLastActivity
	}
	for _, a := range r.Apps {
		if a.Name != compute.JupyterApplication && a.Running {
			s.CustomAppsRunning = append(s.CustomAppsRunning, a.Name)
		}
	}
	if r.CPUPercent != nil {
		s.CPUPercent, s.CPUKnown = *r.CPUPercent, true
	}
	return s
}
