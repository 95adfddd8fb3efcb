package parallel

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	pproto "github.com/shoal-ml/shoal/domain/parallel"
	"github.com/shoal-ml/shoal/store"
)

// maxLeases bounds one lease request (a node's idle workers).
const maxLeases = 256

// maxWait bounds how long a rank waits before it asks again: the last
// mini-batches' end (and the job's) is seen within it.
const maxWait = time.Second

// Lease gives up to req.Max mini-batches to a rank, lowest index first
// (given-back ones before fresh ones, which all come after them), after
// taking back leases of ended attempts (no try spent) and leases past
// their deadline (a try spent).
func (s *Service) Lease(ctx context.Context, c *Caller, req pproto.LeaseRequest) (*pproto.LeaseResponse, error) {
	if err := c.checkRank(req.Rank); err != nil {
		return nil, err
	}
	want := min(max(req.Max, 1), maxLeases)
	var out *pproto.LeaseResponse
	err := s.store.Update(ctx, func(tx store.Tx) error {
		p, err := tx.GetParallelPlan(c.Workspace, c.Job)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return core.Errorf(core.ECONFLICT, "job %s has no plan yet: a rank posts it before leasing", c.Job)
		} else if err != nil {
			return err
		}
		now := tx.Now()
		inFlight, next, err := s.reclaim(tx, c, p, now)
		if err != nil {
			return err
		}
		if p.Aborted != "" {
			out = &pproto.LeaseResponse{State: pproto.StateAbort, Message: p.Aborted}
			return nil
		}
		deadline := now.Add(time.Duration(c.Spec.TimeoutSeconds())*time.Second + s.grace)
		var leases []pproto.Lease
		pending, err := tx.ListParallelBatches(c.Workspace, c.Job, pproto.BatchPending, 0, want)
		if err != nil {
			return err
		}
		give := func(b *pproto.Batch) error {
			b.State, b.Try, b.Rank, b.AttemptID, b.Deadline = pproto.BatchLeased, b.Try+1, req.Rank, c.AttemptID, deadline
			leases = append(leases, pproto.Lease{Index: b.Index, Try: b.Try})
			return tx.PutParallelBatch(b)
		}
		for _, b := range pending {
			if err := give(b); err != nil {
				return err
			}
		}
		for len(leases) < want && p.NextFresh < p.MiniBatches {
			if err := give(&pproto.Batch{Workspace: c.Workspace, Job: c.Job, Index: p.NextFresh}); err != nil {
				return err
			}
			p.NextFresh++
		}
		if err := tx.UpdateParallelPlan(p); err != nil {
			return err
		}
		switch {
		case len(leases) > 0:
			out = &pproto.LeaseResponse{State: pproto.StateWork, Leases: leases}
		case inFlight > 0:
			wait := min(max(next.Sub(now), time.Second), maxWait)
			out = &pproto.LeaseResponse{State: pproto.StateWait, WaitSeconds: math.Round(wait.Seconds()*10) / 10}
		default:
			out = &pproto.LeaseResponse{State: pproto.StateDone}
		}
		return nil
	})
	return out, err
}

// reclaim takes back the leases of attempts other than c's (their
// attempt ended: no try spent) and those past their deadline (a try
// spent: failed after its last one), then checks the thresholds. It
// returns how many stay in flight and the earliest deadline among them.
func (s *Service) reclaim(tx store.Tx, c *Caller, p *pproto.Plan, now time.Time) (int, time.Time, error) {
	leased, err := tx.ListParallelBatches(c.Workspace, c.Job, pproto.BatchLeased, 0, 0)
	if err != nil {
		return 0, time.Time{}, err
	}
	inFlight, next, changed := 0, time.Time{}, false
	for _, b := range leased {
		switch {
		case b.AttemptID != c.AttemptID:
			b.State = pproto.BatchPending
		case now.After(b.Deadline):
			why := fmt.Sprintf("mini-batch %d: rank %d held it past retry_settings.timeout (%d s) without a report", b.Index, b.Rank, c.Spec.TimeoutSeconds())
			if _, err := failTry(tx, c, b, why, nil, now); err != nil {
				return 0, time.Time{}, err
			}
			changed = true
		default:
			inFlight++
			if next.IsZero() || b.Deadline.Before(next) {
				next = b.Deadline
			}
			continue
		}
		if err := tx.PutParallelBatch(b); err != nil {
			return 0, time.Time{}, err
		}
	}
	if changed {
		if err := checkThresholds(tx, c, p); err != nil {
			return 0, time.Time{}, err
		}
	}
	return inFlight, next, nil
}

// failTry spends a try of b: pending again while tries remain, else
// failed with failed (the whole mini-batch, by its plan's description,
// when none named). It reports whether b is failed for good.
func failTry(tx store.Tx, c *Caller, b *pproto.Batch, why string, failed []pproto.FailedItem, now time.Time) (bool, error) {
	b.FailedTries++
	b.Error = why
	if b.FailedTries <= c.Spec.MaxRetries() {
		b.State = pproto.BatchPending
		return false, nil
	}
	b.State, b.FinishedAt = pproto.BatchFailed, now
	if len(failed) == 0 {
		d, err := tx.GetParallelDescription(c.Workspace, c.Job, b.Index)
		if err != nil {
			return false, err
		}
		if d == "" {
			d = fmt.Sprintf("mini-batch %d", b.Index)
		}
		failed = []pproto.FailedItem{{Item: d, Error: why}}
	}
	b.FailedItems = failed
	return true, nil
}

// ReleaseRank gives back, at once and without spending a try, the
// mini-batches leased to one rank of an attempt: the rank's node was lost
// or preempted, and the attempt goes on with the other ranks. It runs in
// the caller's transaction (the one that ends the rank).
func ReleaseRank(tx store.Tx, workspace, jobName, attemptID string, rank int) error {
	leased, err := tx.ListParallelBatches(workspace, jobName, pproto.BatchLeased, 0, 0)
	if err != nil {
		return err
	}
	for _, b := range leased {
		if b.AttemptID == attemptID && b.Rank == rank {
			b.State = pproto.BatchPending
			if err := tx.PutParallelBatch(b); err != nil {
				return err
			}
		}
	}
	return nil
}
