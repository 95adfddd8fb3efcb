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
// longer than th.QueueWait since its submission. It reads the queue's
// references (no job documents) and only the jobs whose wait crossed the
// threshold since the last pass.
func (l *Loop) watchQueue(ctx context.Context, now time.Time, th Thresholds) error {
	upTo := now.Add(-th.QueueWait)
	var list []onset
	var after time.Time
	err := l.s.Store().View(ctx, func(tx store.Tx) error {
		var err error
		if after, err = readCursor(tx, cursorQueue); err != nil {
			return err
		}
		refs, err := tx.ListQueuedJobRefs()
		if err != nil {
			return err
		}
		list = list[:0]
		for _, r := range refs {
			if r.CreatedOn.After(after) && !r.CreatedOn.After(upTo) {
				list = append(list, onset{key: r.Workspace + "/" + r.Name, at: r.CreatedOn, data: r})
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("watching the queue: %w", err)
	}
	if !upTo.After(after) {
		return nil
	}
	batch, cursor := due(list, after, upTo)
	err = l.s.Store().Update(ctx, func(tx store.Tx) error {
		// Read again under the write: another leader's pass may have
		// moved the cursor since.
		cur, err := readCursor(tx, cursorQueue)
		if err != nil {
			return err
		}
		if !cur.Equal(after) {
			return nil
		}
		for _, o := range batch {
			r := o.data.(store.QueuedJobRef)
			j, err := tx.GetJob(r.Workspace, r.Name)
			if core.ErrorCode(err) == core.ENOTFOUND {
				continue
			} else if err != nil {
				return err
			}
			if j.Status != job.JobQueued {
				continue // started (or ended) since the read
			}
			if err := tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: j.Workspace, ResourceType: core.ResourceJob,
				ResourceName: j.Name, Kind: core.EventQueuedTooLong, Actor: "controller",
				Reason: queuedReason(tx, j, now, th.QueueWait)}); err != nil {
				return err
			}
		}
		return writeCursor(tx, cursorQueue, cursor)
	})
	if err != nil {
		return fmt.Errorf("recording jobs queued too long: %w", err)
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
