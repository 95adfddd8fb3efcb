// Package schedules is the control loop of job schedules: at each pass
// it finds, for every enabled schedule, the latest firing due since the
// schedule's last firing (or since it was last written or enabled) with
// the trigger's engine (decide/schedule Due), and has the schedules
// service act on it (Fire): one job per firing, idempotent by the
// firing's job name and recorded under the leader's fence, so that a
// restart or a failover neither repeats nor loses a firing. A firing
// missed while no server ran is started once, the latest only, never a
// backlog, and says it was late.
package schedules

import (
	"context"
	"errors"
	"time"

	"github.com/shoal-ml/shoal/decide/schedule"
	dschedule "github.com/shoal-ml/shoal/domain/schedule"
	"github.com/shoal-ml/shoal/service/schedules"
	"github.com/shoal-ml/shoal/store"
)

// LateAfter is how old a firing must be to count as missed (no server
// ran at its time): the loop runs every few seconds, so a firing acted
// on later than this was not seen on time.
const LateAfter = 2 * time.Minute

// Services is what the loop needs: the request services the schedules
// service is built over (schedules.Over), the store among them.
type Services interface {
	schedules.Services
}

// Loop fires due schedules.
type Loop struct {
	s     Services
	sched *schedules.Service
}

// New returns the loop over s.
func New(s Services) *Loop { return &Loop{s: s, sched: schedules.Over(s)} }

// RunOnce acts on every schedule's firing due at now. A schedule whose
// firing fails for the store is tried again at the next pass; the others
// go on.
func (l *Loop) RunOnce(ctx context.Context, now time.Time) error {
	var list []*dschedule.JobSchedule
	if err := l.s.Store().View(ctx, func(tx store.Tx) (err error) {
		list, err = tx.ListJobSchedules("")
		return err
	}); err != nil {
		return err
	}
	var errs []error
	for _, sc := range list {
		at, ok := Due(sc, now)
		if !ok {
			continue
		}
		f := schedules.Firing{At: at, Late: now.Sub(at) > LateAfter}
		if err := l.sched.Fire(ctx, sc.Workspace, sc.Name, f, now); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Due is the schedule's latest firing in (since, now], since being its
// last firing acted on or, when later, when it was last written or
// enabled (firings before a schedule existed, or while it was disabled,
// are never caught up).
func Due(sc *dschedule.JobSchedule, now time.Time) (time.Time, bool) {
	if !sc.IsEnabled {
		return time.Time{}, false
	}
	c, err := schedule.CompileTrigger(sc.Trigger, "")
	if err != nil {
		return time.Time{}, false // checked at create; a later engine's refusal is not a firing
	}
	since := sc.UpdatedOn
	if since.IsZero() {
		since = sc.CreatedOn
	}
	if l := sc.Status.LastFireTime; l != nil && l.After(since) {
		since = *l
	}
	return c.Due(since, now)
}
