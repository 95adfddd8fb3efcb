package idle

import "time"

// Policy is an instance's idle shutdown setting.
type Policy struct {
	// Minutes is idle_time_before_shutdown_minutes; 0 (or less) turns
	// idle shutdown off, though the idle clock is still kept for `show`.
	Minutes int
	// CPUPercentBelow is idle_cpu_percent_below: when above 0, CPU use at
	// or above it is ongoing activity. 0 turns the floor off.
	CPUPercentBelow float64
	// WarnBefore is how long before the shutdown the owner is warned;
	// 0 gives no warning.
	WarnBefore time.Duration
	// Minute is how long one idle minute lasts: 0 means time.Minute. It is
	// shortened only to rehearse idle shutdown in seconds.
	Minute time.Duration
}

// minute returns the length of one idle minute.
func (p Policy) minute() time.Duration { return unit(p.Minute) }

func unit(minute time.Duration) time.Duration {
	if minute <= 0 {
		return time.Minute
	}
	return minute
}

// State is the idle bookkeeping the server keeps between evaluations.
type State struct {
	// IdleSince is when the idle clock started: the end of the last
	// activity, or the last reset. Zero means not started yet; the first
	// evaluation then starts it at its own time rather than shutting
	// down an instance it knows nothing about.
	IdleSince time.Time `json:"idle_since,omitzero"`
	// WarnedAt is when the last pre-shutdown warning was given.
	WarnedAt time.Time `json:"warned_at,omitzero"`
	// PostponedUntil is the owner's postponement: no idle shutdown before
	// it. Evaluate drops it once it has passed.
	PostponedUntil time.Time `json:"postponed_until,omitzero"`
}

// Reset puts the idle clock back to 0 at now, as when the instance
// starts: the warning given, if any, no longer applies. A postponement is
// kept, since the owner asked for no shutdown before then; on a stop the
// server drops the whole State.
func Reset(prev State, now time.Time) State {
	return State{IdleSince: now, PostponedUntil: prev.PostponedUntil}
}

// OnMinutesChanged applies Azure's rule for a changed
// idle_time_before_shutdown_minutes: when the new setting is shorter than
// the time the instance has already been idle, the idle clock goes back
// to 0 (idle 20 minutes, setting changed from 30 to 15: the instance is
// not stopped at once but 15 minutes later). A new setting equal to the
// idle time counts as shorter, because otherwise the change itself would
// stop the instance on the spot, which is what the rule prevents. A
// longer setting, or turning idle shutdown off (newMin 0), keeps the
// clock. minute is the length of one idle minute (0: time.Minute).
//
// The old setting plays no part: the rule compares the new one with the
// idle time only. The caller calls this only when the setting changed.
func OnMinutesChanged(prev State, newMin int, minute time.Duration, now time.Time) State {
	if newMin <= 0 || prev.IdleSince.IsZero() {
		return prev
	}
	if time.Duration(newMin)*unit(minute) <= now.Sub(prev.IdleSince) {
		return Reset(prev, now)
	}
	return prev
}

// Postpone records that the owner dismissed the upcoming shutdown: the
// idle clock goes back to 0 and there is no idle shutdown before now+d.
// A postponement already granted further out is kept; a shorter d never
// shortens it.
func Postpone(prev State, now time.Time, d time.Duration) State {
	next := Reset(prev, now)
	if until := now.Add(d); d > 0 && until.After(next.PostponedUntil) {
		next.PostponedUntil = until
	}
	return next
}
