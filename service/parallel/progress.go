package parallel

import (
	"context"
	"math"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
)

// RateWindow is how far back the rate of finished mini-batches is
// measured.
const RateWindow = 5 * time.Minute

// Progress returns where a job's mini-batches stand, at the time of the
// store's transaction; nil when the job has no plan yet.
func (s *Service) Progress(ctx context.Context, workspace, jobName string) (*job.ParallelProgress, error) {
	var out *job.ParallelProgress
	err := s.store.View(ctx, func(tx store.Tx) (err error) {
		out, err = ProgressTx(tx, workspace, jobName)
		return err
	})
	return out, err
}

// ProgressTx is Progress in the caller's transaction (job show reads it
// with the job).
func ProgressTx(tx store.Tx, workspace, jobName string) (*job.ParallelProgress, error) {
	p, err := tx.GetParallelPlan(workspace, jobName)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	now := tx.Now()
	c, err := tx.CountParallelBatches(workspace, jobName, now.Add(-RateWindow))
	if err != nil {
		return nil, err
	}
	pr := &job.ParallelProgress{MiniBatches: p.MiniBatches, Items: p.Items, Done: c.Done, Failed: c.Failed,
		Retried: c.Retried, InFlight: c.Leased, Left: p.MiniBatches - c.Done - c.Failed, FailedItems: c.FailedItems, Aborted: p.Aborted}
	window := min(now.Sub(p.CreatedAt), RateWindow)
	if window > 0 && c.DoneSince > 0 {
		rate := float64(c.DoneSince) / window.Minutes()
		// Shown to a tenth: the rate is an estimate over a window.
		pr.PerMinute = math.Round(rate*10) / 10
		if pr.Left > 0 && p.Aborted == "" {
			eta := now.Add(time.Duration(float64(pr.Left) / rate * float64(time.Minute)))
			pr.ETA = eta.UTC().Format(time.RFC3339)
		}
	}
	return pr, nil
}
