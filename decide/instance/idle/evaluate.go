package idle

import (
	"fmt"
	"strings"
	"time"
)

// Decision is the outcome of one evaluation.
type Decision struct {
	// IdleSince and IdleMinutes are what `show` reports as idle_state:
	// when the idle clock started and how many whole idle minutes it
	// shows (0 while active).
	IdleSince   time.Time
	IdleMinutes int
	// Active is set when ongoing activity holds the clock at 0.
	Active bool
	// Activity explains the clock, in words for people. While Active it
	// lists the ongoing activity ("job train-1 running", "ssh: 1 open
	// session", "custom app rstudio running", "jupyter kernel python3
	// busy", "cpu 87% ≥ 10%"); otherwise it names the last activity that
	// started the clock ("last: app proxy request at
	// 2025-01-01T09:40:00Z"); it is empty when nothing with a time
	// started the clock (a reset, or the end of a job or app). Times are absolute, not "2m ago", so that the text changes
	// only when the activity does: the server stores it with the
	// instance and writes only what changed.
	Activity []string
	// ShutdownAt is when the instance stops if nothing happens: the later
	// of IdleSince + Minutes and the postponement. Zero when idle
	// shutdown is off.
	ShutdownAt time.Time
	// Warn: give the pre-shutdown warning now (once per deadline).
	Warn bool
	// Shutdown: stop the instance now.
	Shutdown bool
	// Reason says why, in one sentence for the instance's event log; it
	// is set on every decision.
	Reason string
}

// Evaluate applies the idle rules to what is observed at now. prev is the
// State the previous evaluation returned (or Reset's); the returned State
// is to be kept for the next one. See the package documentation for what
// counts as activity.
func Evaluate(p Policy, prev State, s Signals, now time.Time) (State, Decision) {
	next := prev
	if !next.PostponedUntil.IsZero() && !now.Before(next.PostponedUntil) {
		next.PostponedUntil = time.Time{}
	}
	ongoing := ongoingActivity(p, s)
	last, lastWhat := lastActivity(s, now)

	start := prev.IdleSince
	if start.IsZero() || start.After(now) {
		start = now
	}
	d := Decision{Active: len(ongoing) > 0, Activity: []string{}}
	switch {
	case d.Active:
		start = now
		d.Activity = ongoing
	case !last.IsZero() && !last.Before(start):
		start = last
		d.Activity = []string{"last: " + lastWhat + " at " + stamp(last)}
	}
	next.IdleSince = start
	idleFor := now.Sub(start)
	d.IdleSince, d.IdleMinutes = start, int(idleFor/p.minute())

	if p.Minutes <= 0 {
		d.Reason = "idle shutdown is off (idle_time_before_shutdown_minutes is not set)"
		return next, d
	}
	d.ShutdownAt = start.Add(time.Duration(p.Minutes) * p.minute())
	if next.PostponedUntil.After(d.ShutdownAt) {
		d.ShutdownAt = next.PostponedUntil
	}
	warnFrom := d.ShutdownAt.Add(-p.WarnBefore)
	switch {
	case d.Active:
		d.Reason = "active: " + strings.Join(ongoing, "; ")
	case !now.Before(d.ShutdownAt):
		d.Shutdown = true
		d.Reason = fmt.Sprintf("idle for %d min ≥ idle_time_before_shutdown_minutes %d (%s since %s)",
			d.IdleMinutes, p.Minutes, nothingText(p), stamp(start))
	case p.WarnBefore > 0 && !now.Before(warnFrom) && next.WarnedAt.Before(warnFrom):
		// WarnedAt before this deadline's warning window means the last
		// warning announced an earlier deadline (or none was given).
		d.Warn = true
		next.WarnedAt = now
		d.Reason = fmt.Sprintf("idle for %d min: the instance stops at %s (idle_time_before_shutdown_minutes %d) unless it is used or its owner postpones the shutdown",
			d.IdleMinutes, stamp(d.ShutdownAt), p.Minutes)
	case d.ShutdownAt.Equal(next.PostponedUntil):
		d.Reason = fmt.Sprintf("idle for %d min; shutdown postponed until %s", d.IdleMinutes, stamp(d.ShutdownAt))
	default:
		d.Reason = fmt.Sprintf("idle for %d min of idle_time_before_shutdown_minutes %d; stops at %s", d.IdleMinutes, p.Minutes, stamp(d.ShutdownAt))
	}
	return next, d
}

// nothingText lists what was absent during the idle time, for the
// shutdown's reason.
func nothingText(p Policy) string {
	t := "no running job, open SSH session, busy kernel or running custom app; no kernel, terminal, SSH or app proxy activity"
	if p.CPUPercentBelow > 0 {
		t += "; CPU below " + percent(p.CPUPercentBelow)
	}
	return t
}
