package watch

import (
	"context"
	"fmt"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
)

// watchInstances records idle_shutdown_soon once on each running instance
// that idle shutdown will stop within th.IdleShutdownWarning: once per
// deadline (an event already in the warning window of the deadline is
// that deadline's; a deadline moved later by use or a postponement gets
// a warning of its own once its window opens).
func (l *Loop) watchInstances(ctx context.Context, now time.Time, th Thresholds) error {
	type soon struct {
		ws, name string
		at       time.Time
		minutes  int
	}
	var due []soon
	err := l.s.Store().View(ctx, func(tx store.Tx) error {
		due = due[:0]
		list, err := tx.ListComputes(compute.ComputeFilter{AllWorkspaces: true, Type: compute.ComputeTypeInstance})
		if err != nil {
			return err
		}
		for _, c := range list {
			if c.Instance == nil {
				continue
			}
			l.s.OverlayIdle(c)
			at, ok := ShutdownAt(c, th.IdleMinute)
			if !ok || now.Before(at.Add(-th.IdleShutdownWarning)) || !now.Before(at) {
				continue
			}
			warned, err := warnedFor(tx, c, at, th.IdleShutdownWarning)
			if err != nil {
				return err
			}
			if !warned {
				due = append(due, soon{ws: c.Workspace, name: c.Name, at: at, minutes: *c.IdleTimeBeforeShutdownMinutes})
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("watching instances' idle shutdown: %w", err)
	}
	for _, d := range due {
		err := l.s.Store().Update(ctx, func(tx store.Tx) error {
			c, err := tx.GetCompute(d.ws, d.name)
			if core.ErrorCode(err) == core.ENOTFOUND {
				return nil
			} else if err != nil {
				return err
			}
			if warned, err := warnedFor(tx, c, d.at, th.IdleShutdownWarning); err != nil || warned {
				return err
			}
			return compute.AppendComputeEvent(ctx, tx, c, core.EventIdleShutdownSoon,
				fmt.Sprintf("instance %s has been idle and idle shutdown stops it at %s (in %s; idle_time_before_shutdown_minutes %d) unless it is used or its owner runs `shoal compute postpone-shutdown -n %s`",
					c.Name, d.at.UTC().Format(time.RFC3339), d.at.Sub(now).Round(time.Second), d.minutes, c.Name))
		})
		if err != nil {
			return fmt.Errorf("recording instance %s/%s's idle shutdown warning: %w", d.ws, d.name, err)
		}
	}
	return nil
}

// warnedFor reports whether instance c has an idle_shutdown_soon event in
// the warning window of the deadline at.
func warnedFor(tx store.Tx, c *compute.Compute, at time.Time, warning time.Duration) (bool, error) {
	since := at.Add(-warning)
	if c.CreatedOn.After(since) {
		since = c.CreatedOn // the log of a compute starts at its creation
	}
	events, err := tx.ListEvents(core.EventFilter{Workspace: c.Workspace, ResourceType: core.ResourceCompute, ResourceName: c.Name, Since: since})
	if err != nil {
		return false, err
	}
	for _, e := range events {
		if e.Kind == core.EventIdleShutdownSoon {
			return true, nil
		}
	}
	return false, nil
}

// ShutdownAt is when idle shutdown stops running instance c if nothing
// happens (decide/instance/idle's rule: the idle clock's start plus
// idle_time_before_shutdown_minutes, or the owner's postponement if
// later), with minute the length of an idle minute; false when idle
// shutdown is off, the instance is not running or in use now.
func ShutdownAt(c *compute.Compute, minute time.Duration) (time.Time, bool) {
	st := c.Instance
	if st == nil || st.State != compute.InstanceRunning || st.Pending != "" || st.IdleActive || st.IdleSince == nil ||
		c.IdleTimeBeforeShutdownMinutes == nil || *c.IdleTimeBeforeShutdownMinutes <= 0 {
		return time.Time{}, false
	}
	at := st.IdleSince.Add(time.Duration(*c.IdleTimeBeforeShutdownMinutes) * minute)
	if p := st.ShutdownPostponedUntil; p != nil && p.After(at) {
		at = *p
	}
	return at, true
}
