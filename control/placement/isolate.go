package placement

import (
	"context"
	"log/slog"
	"time"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/live"
)

// EventPlacementFailed is the kind of the job event that records a
// placement that could not be written (once per retry).
const EventPlacementFailed = "placement_failed"

// applyOneByOne writes a pass's placements each in a transaction of its
// own, then the reasons: what Apply does when writing them together
// failed, so that one job whose placement cannot be written (loop.Each:
// recorded on it, retried after a backoff) does not keep every other job
// of the pass queued, pass after pass.
func (l *Loop) applyOneByOne(ctx context.Context, now time.Time, st *scheduling.State, placements []scheduler.Placement,
	refs queueRefs, reasons *live.ReasonChanges, waiting map[string]scheduler.Reason) ([]string, error) {
	s := l.s
	var wake []string
	items := make([]loop.Item[scheduler.Placement], len(placements))
	for i, p := range placements {
		items[i] = loop.Item[scheduler.Placement]{Key: p.JobID, Value: p}
	}
	loop.Each(l.failures, now, s.Logger(), "placing a job", items, func(p scheduler.Placement) error {
		var nodes []*node.Node
		err := s.Store().Update(ctx, func(tx store.Tx) (err error) {
			nodes, err = s.Place(ctx, tx, refs.get(p.JobID), p.NodeIDs)
			return err
		})
		if err == nil && nodes != nil {
			wake = append(wake, p.NodeIDs...)
			for _, n := range nodes {
				st.ReplaceNode(n)
			}
			l.placed(st, refs.get(p.JobID))
		}
		return err
	}, func(p scheduler.Placement, f loop.Failure) {
		ref := refs.get(p.JobID)
		err := s.Store().Update(ctx, func(tx store.Tx) error {
			return service.AppendJobEvent(ctx, tx, &job.Job{Workspace: ref.Workspace, JobSpec: job.JobSpec{Name: ref.Name}},
				EventPlacementFailed, f.Reason("placing the job on "+ref.ComputeKey))
		})
		if err != nil && core.ErrorCode(err) != core.ENOTFOUND {
			s.Logger().Warn("recording a job's placement failure failed", slog.String("job", p.JobID), slog.Any("err", err))
		}
	})
	if reasons == nil {
		return wake, nil
	}
	err := s.Store().Update(ctx, func(tx store.Tx) error {
		for _, id := range reasons.Changed {
			if err := service.AppendJobEvent(ctx, tx, waitingJob(id), "waiting", waiting[id].Message()); err != nil {
				return err
			}
		}
		return reasons.Write(tx)
	})
	return wake, err
}

// placed takes the demand a placed job met off its compute's.
func (l *Loop) placed(st *scheduling.State, ref store.QueuedJobRef) {
	st.Demand[compute.ComputeKey(ref.Workspace, ref.ComputeKey)] -= ref.InstanceCount
}
