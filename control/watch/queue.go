package watch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
)

// watchQueue records queued_too_long once for each job that has waited
// longer than th.QueueWait since its submission. It reads only the queued
// jobs whose wait crossed the threshold since the last pass (their refs,
// not their documents), at most a batch of them: reading the whole
// queue's refs for it held 25 MB of a 100,000-job queue every 15 s.
func (l *Loop) watchQueue(ctx context.Context, now time.Time, th Thresholds) error {
	err := l.watchCursor(ctx, cursorQueue, now.Add(-th.QueueWait),
		func(tx store.Tx, after, upTo time.Time) ([]onset, bool, error) {
			// One more than a batch: a read that returns no more than a
			// batch returned the whole window.
			refs, err := tx.ListQueuedJobsCreated(after, upTo, maxBatch+1)
			list := make([]onset, 0, len(refs))
			for _, r := range refs {
				list = append(list, onset{key: r.Workspace + "/" + r.Name, at: r.CreatedOn, data: r})
			}
			return list, len(refs) <= maxBatch, err
		},
		func(tx store.Tx, o onset) error {
			r := o.data.(store.QueuedJobRef)
			j, err := tx.GetJob(r.Workspace, r.Name)
			if core.ErrorCode(err) == core.ENOTFOUND {
				return nil
			} else if err != nil {
				return err
			}
			if j.Status != job.JobQueued {
				return nil // started (or ended) since the read
			}
			return tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: j.Workspace, ResourceType: core.ResourceJob,
				ResourceName: j.Name, Kind: core.EventQueuedTooLong, Actor: "controller",
				Reason: queuedReason(tx, j, now, th.QueueWait)})
		})
	if err != nil {
		return fmt.Errorf("watching the queue: %w", err)
	}
	return nil
}

// queuedReason says how long job j has waited and why, as the
// scheduler's last pass said.
func queuedReason(tx store.Tx, j *job.Job, now time.Time, threshold time.Duration) string {
	why := "the scheduler has not said why yet"
	if wr, err := tx.GetWaitReason(j.Workspace, j.Name); err == nil && wr.Message != "" {
		why = wr.Message
		if wr.Code != "" {
			why += " (" + wr.Code + ")"
		}
	}
	return fmt.Sprintf("job %s has been queued on %s for %s, over the %s threshold (notifications.queue_wait_threshold): %s",
		j.Name, j.Compute, now.Sub(j.CreatedOn).Round(time.Second), threshold, why)
}

func sortOnsets(list []onset) {
	slices.SortFunc(list, func(a, b onset) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
}
