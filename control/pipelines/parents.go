package pipelines

import (
	"context"
	"log/slog"
	"time"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
)

// GiveUpAfter is how many failed passes in a row end a pipeline or a
// sweep Failed with the error (about ten minutes with the default
// backoff): a parent the server cannot advance fails, as on Azure,
// rather than spin for good.
const GiveUpAfter = 8

// EventAdvanceFailed is the kind of the job event that records a failed
// pass over a parent job (once per retry, not once per pass).
const EventAdvanceFailed = "advance_failed"

// ParentServices is what RunParents asks of the request services.
type ParentServices interface {
	loop.Base
	// CancelJob cancels a job.
	CancelJob(ctx context.Context, workspace, name string) (*job.Job, error)
}

// RunParents advances each parent job (a pipeline or a sweep; kind says
// which) with advance, isolating their failures (loop.Each): a parent
// whose pass fails has the failure as its reason and an event, is tried
// again after a backoff, and after GiveUpAfter failures in a row ends
// Failed with the error, its running children (children lists them)
// canceled. A parent asked to cancel starts a backoff of its own, so a
// cancel is carried out by the next pass however long the parent had
// been failing; one whose cancel keeps failing ends Canceled.
func RunParents(ctx context.Context, now time.Time, s ParentServices, b *loop.Backoff, kind string, parents []*job.Job,
	advance func(*job.Job) error, children func(*job.Job) []string) {
	items := make([]loop.Item[*job.Job], len(parents))
	for i, p := range parents {
		// The status is in the key: a cancel is not held up by the wait
		// of a pipeline that kept failing.
		items[i] = loop.Item[*job.Job]{Key: p.Workspace + "/" + p.Name + "#" + p.Status, Value: p}
	}
	loop.Each(b, now, s.Logger(), "advancing a "+kind, items, advance, func(p *job.Job, f loop.Failure) {
		what := "advancing the " + kind
		if p.Status == job.JobCancelRequested {
			what = "canceling the " + kind
		}
		reason := f.Reason(what)
		var err error
		if f.Exhausted {
			err = giveUp(ctx, now, s, p, reason, children(p))
		} else {
			err = s.Store().Update(ctx, func(tx store.Tx) error {
				j, err := tx.GetJob(p.Workspace, p.Name)
				if err != nil || job.JobTerminal(j.Status) {
					return err
				}
				j.StatusReason = reason
				j.Version++
				if err := tx.UpdateJob(j); err != nil {
					return err
				}
				return appendEvent(tx, j, EventAdvanceFailed, reason)
			})
		}
		if err != nil && core.ErrorCode(err) != core.ENOTFOUND {
			s.Logger().Warn("recording a "+kind+"'s failure failed", slog.String("job", p.Workspace+"/"+p.Name), slog.Any("err", err))
		}
	})
}

// giveUp ends parent p, which failed GiveUpAfter passes in a row: its
// running children are canceled (each as far as it can be) and it ends
// Failed with reason, or Canceled when a cancel was asked.
func giveUp(ctx context.Context, now time.Time, s ParentServices, p *job.Job, reason string, children []string) error {
	for _, c := range children {
		if _, err := s.CancelJob(ctx, p.Workspace, c); err != nil && core.ErrorCode(err) != core.ENOTFOUND {
			s.Logger().Warn("canceling a child of a parent that failed failed", slog.String("job", p.Workspace+"/"+c), slog.Any("err", err))
		}
	}
	return s.Store().Update(ctx, func(tx store.Tx) error {
		j, err := tx.GetJob(p.Workspace, p.Name)
		if err != nil || job.JobTerminal(j.Status) {
			return err
		}
		status := job.JobFailed
		if j.Status == job.JobCancelRequested {
			status = job.JobCanceled
		} else {
			j.Error = reason
		}
		j.Status, j.StatusReason, j.EndTime = status, reason, &now
		j.Version++
		return UpdateParent(tx, j)
	})
}

// UpdateParent writes parent j, read unfinished in tx and changed, and
// when the change ended it records its end as an event (completed,
// failed, canceled — a canceled one as canceled, not failed): every path
// that ends a job says so in its log, which the notifier follows.
func UpdateParent(tx store.Tx, j *job.Job) error {
	if err := tx.UpdateJob(j); err != nil {
		return err
	}
	if kind := endKinds[j.Status]; kind != "" {
		return appendEvent(tx, j, kind, j.StatusReason)
	}
	return nil
}

// endKinds are the events of a job's end, by its status.
var endKinds = map[string]string{job.JobCompleted: core.EventJobCompleted, job.JobFailed: core.EventJobFailed, job.JobCanceled: core.EventJobCanceled}

// appendEvent records an event on job j, as the loops' system principal.
func appendEvent(tx store.Tx, j *job.Job, kind, reason string) error {
	return tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: j.Workspace, ResourceType: core.ResourceJob,
		ResourceName: j.Name, Kind: kind, Actor: "system", Reason: reason})
}
