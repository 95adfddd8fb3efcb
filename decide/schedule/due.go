package schedule

import (
	"fmt"
	"time"
)

// MissedFiringMaxAge is the default bound on how late a firing may still
// be carried out (the same rule as instance.MissedFiringMaxAge): a
// "stop at 18:00" missed while the server was down is worth doing at
// 23:00, not the next afternoon, when the user may be at work on the
// instance.
const MissedFiringMaxAge = 12 * time.Hour

// Due returns the schedule's most recent firing in (last, now] — last
// being when schedules were last evaluated — and ok=false when there is
// none. It returns one firing however many fell in the window: a
// controller that evaluates every few seconds carries out each firing
// once, and one that was down for days carries out the latest once, never
// a backlog.
func (s *Schedule) Due(last, now time.Time) (fireAt time.Time, ok bool) {
	if !now.After(last) {
		return time.Time{}, false
	}
	f := s.Prev(now)
	if f.IsZero() || !f.After(last) {
		return time.Time{}, false
	}
	return f, true
}

// Meaningful reports whether a firing at fireAt is still worth carrying
// out at now: at most maxAge old (maxAge <= 0: no bound). An older one is
// dropped, with an event, rather than acted on out of its context.
func Meaningful(fireAt, now time.Time, maxAge time.Duration) bool {
	return maxAge <= 0 || now.Sub(fireAt) <= maxAge
}

// Firing is the one schedule firing an instance should act on.
type Firing struct {
	// Index is the schedule's position in the spec,
	// schedules.compute_start_stop[Index].
	Index int
	// Action is shoal.ScheduleActionStart or shoal.ScheduleActionStop.
	Action string
	// At is when the schedule fired, in the schedule's time zone.
	At time.Time
	// Stale reports that At is older than the max age Decide was given:
	// the firing is to be recorded as skipped, not carried out.
	Stale bool
	// Reason is for the instance's events, such as `schedule 1 (cron
	// "0 18 * * *" Pacific Standard Time) fired at 2026-03-08 18:00 PDT`;
	// schedules are numbered from 1 there, as people count.
	Reason string
}

// Decide is the schedules' verdict for one instance evaluated at now,
// when they were last evaluated at last: of the firings due in (last, now]
// across all its schedules, only the latest counts — a missed "stop at
// 18:00" followed by a missed "start at 08:00" yields only the start,
// since the stop was overtaken by the start. Two schedules firing at the
// same instant resolve to the later one in the list, as if the firings
// were applied in order. ok=false when nothing is due. A latest firing
// more than maxAge old (see Meaningful) comes back with Stale set. Nil and
// disabled schedules never fire.
func Decide(list []*Schedule, last, now time.Time, maxAge time.Duration) (f Firing, ok bool) {
	for i, s := range list {
		if s == nil {
			continue
		}
		at, due := s.Due(last, now)
		if !due || (ok && at.Before(f.At)) {
			continue
		}
		f, ok = Firing{Index: i, Action: s.action, At: at}, true
	}
	if !ok {
		return Firing{}, false
	}
	s := list[f.Index]
	f.Stale = !Meaningful(f.At, now, maxAge)
	f.Reason = fmt.Sprintf("schedule %d (%s) fired at %s", f.Index+1, s, f.At.In(s.loc).Format("2006-01-02 15:04 MST"))
	return f, true
}
