// Package idle decides when a compute instance is idle, by Azure's rules
// and a few of Shoal's. An instance is active while it has a Jupyter kernel
// that is busy or was used within the idle window, a Jupyter terminal in
// use, a job running, an open SSH session, a running custom application
// (an instance with one is never idle), or — Shoal's additions — a request
// through the server's application proxy, or CPU use at or above an
// optional floor. It is idle since the moment the last of these ended;
// after idle_time_before_shutdown_minutes of that it is shut down, with a
// warning some minutes before that its user may answer by postponing.
// Everything here is pure: times come in as arguments.
package idle

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shoal-ml/shoal"
)

// Bounds of idle_time_before_shutdown_minutes: 15 minutes to 3 days.
const (
	MinMinutes = shoal.MinIdleShutdownMinutes
	MaxMinutes = shoal.MaxIdleShutdownMinutes
)

// ValidateMinutes checks idle_time_before_shutdown_minutes.
func ValidateMinutes(m int) error { return shoal.ValidateIdleShutdownMinutes(m) }

// Kernel is a Jupyter kernel as Jupyter's /api/kernels lists it.
type Kernel struct {
	ID, Name       string
	ExecutionState string // "busy", "idle", "starting"
	LastActivity   time.Time
	Connections    int
}

// Terminal is a Jupyter terminal as /api/terminals lists it.
type Terminal struct {
	Name         string
	LastActivity time.Time
}

// Signals are what the agent and the server observe of an instance.
type Signals struct {
	Kernels           []Kernel
	Terminals         []Terminal
	RunningJobs       []string
	SSHSessions       int
	SSHLastActivity   time.Time
	ProxyLastRequest  time.Time
	CustomAppsRunning []string
	// CPUPercent is the instance's CPU use (percent of its CPUs) when
	// CPUKnown.
	CPUPercent float64
	CPUKnown   bool
}

// Policy is an instance's idle shutdown setting.
type Policy struct {
	// Minutes is idle_time_before_shutdown_minutes; 0 turns idle
	// shutdown off (the idle clock is still kept and shown).
	Minutes int
	// CPUPercentBelow, when above 0, keeps an instance whose CPU use is at
	// or above it from being idle.
	CPUPercentBelow float64
	// WarnBefore is how long before the shutdown the user is warned.
	WarnBefore time.Duration
	// Minute is how long a minute lasts: time.Minute, unless shortened to
	// rehearse idle shutdown.
	Minute time.Duration
}

// State is what is kept between evaluations.
type State struct {
	// IdleSince is when the instance last stopped being active (zero:
	// unknown, taken as now).
	IdleSince time.Time
	// WarnedAt is when the current idle period's warning was given.
	WarnedAt time.Time
	// PostponedUntil: no idle shutdown before this time.
	PostponedUntil time.Time
}

// Decision is the outcome of one evaluation.
type Decision struct {
	IdleSince   time.Time
	IdleMinutes int
	// Activity describes what keeps the instance active right now, in a
	// stable wording (no relative times), e.g. "job train-1 running".
	Activity []string
	// ShutdownAt is when the instance is shut down if nothing happens
	// (zero when idle shutdown is off).
	ShutdownAt time.Time
	// Warn: give the pre-shutdown warning now (once per idle period).
	Warn bool
	// Shutdown: stop the instance now.
	Shutdown bool
	// Reason explains Warn or Shutdown.
	Reason string
}

// Evaluate applies the rules at now.
func Evaluate(p Policy, prev State, s Signals, now time.Time) (State, Decision) {
	if p.Minute <= 0 {
		p.Minute = time.Minute
	}
	window := time.Duration(p.Minutes) * p.Minute
	var active []string
	latest := prev.IdleSince
	if latest.IsZero() {
		latest = now
	}
	seen := func(t time.Time) {
		if t.After(latest) {
			latest = t
		}
	}
	for _, j := range s.RunningJobs {
		active = append(active, fmt.Sprintf("job %s running", j))
	}
	if s.SSHSessions > 0 {
		active = append(active, fmt.Sprintf("ssh: %d open session(s)", s.SSHSessions))
	}
	seen(s.SSHLastActivity)
	for _, a := range s.CustomAppsRunning {
		active = append(active, fmt.Sprintf("custom application %s running", a))
	}
	for _, k := range s.Kernels {
		if strings.EqualFold(k.ExecutionState, "busy") {
			active = append(active, fmt.Sprintf("jupyter kernel %s (%s) busy", k.Name, short(k.ID)))
		}
		seen(k.LastActivity)
	}
	for _, t := range s.Terminals {
		seen(t.LastActivity)
	}
	seen(s.ProxyLastRequest)
	if p.CPUPercentBelow > 0 && s.CPUKnown && s.CPUPercent >= p.CPUPercentBelow {
		active = append(active, fmt.Sprintf("cpu %.0f%% ≥ idle_cpu_percent_below %.0f%%", s.CPUPercent, p.CPUPercentBelow))
	}
	// Recent use shows as activity too, for as long as it counts.
	for _, k := range s.Kernels {
		if !strings.EqualFold(k.ExecutionState, "busy") && !k.LastActivity.IsZero() && now.Sub(k.LastActivity) < p.Minute {
			active = append(active, fmt.Sprintf("jupyter kernel %s (%s) in use", k.Name, short(k.ID)))
		}
	}
	for _, t := range s.Terminals {
		if !t.LastActivity.IsZero() && now.Sub(t.LastActivity) < p.Minute {
			active = append(active, fmt.Sprintf("jupyter terminal %s in use", t.Name))
		}
	}
	if !s.ProxyLastRequest.IsZero() && now.Sub(s.ProxyLastRequest) < p.Minute {
		active = append(active, "application proxy traffic")
	}
	sort.Strings(active)

	next := prev
	ongoing := false
	for _, a := range active {
		if !strings.Contains(a, "in use") && a != "application proxy traffic" {
			ongoing = true
		}
	}
	if ongoing {
		latest = now
	}
	if latest.After(now) {
		latest = now
	}
	if !latest.Equal(next.IdleSince) {
		if latest.After(next.IdleSince) {
			next.WarnedAt = time.Time{} // activity: a new idle period
		}
		next.IdleSince = latest
	}
	d := Decision{IdleSince: next.IdleSince, IdleMinutes: int(now.Sub(next.IdleSince) / p.Minute), Activity: active}
	if d.Activity == nil {
		d.Activity = []string{}
	}
	if p.Minutes <= 0 {
		return next, d
	}
	d.ShutdownAt = next.IdleSince.Add(window)
	if next.PostponedUntil.After(d.ShutdownAt) {
		d.ShutdownAt = next.PostponedUntil
	}
	idleFor := now.Sub(next.IdleSince)
	switch {
	case !now.Before(d.ShutdownAt):
		d.Shutdown = true
		d.Reason = fmt.Sprintf("idle for %d min ≥ idle_time_before_shutdown_minutes %d (no running job, SSH session, busy or recently used kernel or terminal, running custom application or proxy traffic since %s)",
			int(idleFor/p.Minute), p.Minutes, next.IdleSince.UTC().Format(time.RFC3339))
	case next.WarnedAt.IsZero() && !now.Before(d.ShutdownAt.Add(-p.WarnBefore)):
		d.Warn = true
		next.WarnedAt = now
		d.Reason = fmt.Sprintf("idle for %d min: the instance stops at %s (idle_time_before_shutdown_minutes %d) unless it is used or its user postpones the shutdown",
			int(idleFor/p.Minute), d.ShutdownAt.UTC().Format(time.RFC3339), p.Minutes)
	}
	return next, d
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// Reset starts the idle clock again at now (an instance that starts).
func Reset(prev State, now time.Time) State {
	return State{IdleSince: now, PostponedUntil: prev.PostponedUntil}
}

// OnMinutesChanged applies Azure's rule for a changed setting: when the new
// idle time is shorter than the time the instance has already been idle,
// the idle clock goes back to 0 (idle 20 minutes, setting changed to 15:
// the instance is not shut down at once but 15 minutes later).
func OnMinutesChanged(prev State, newMinutes int, minute time.Duration, now time.Time) State {
	if minute <= 0 {
		minute = time.Minute
	}
	if newMinutes > 0 && !prev.IdleSince.IsZero() && now.Sub(prev.IdleSince) > time.Duration(newMinutes)*minute {
		prev.IdleSince, prev.WarnedAt = now, time.Time{}
	}
	return prev
}

// Postpone dismisses an upcoming shutdown: none before now+d, and the idle
// clock starts again.
func Postpone(prev State, now time.Time, d time.Duration) State {
	return State{IdleSince: now, PostponedUntil: now.Add(d)}
}
