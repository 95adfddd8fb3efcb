package parallel

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	pproto "github.com/shoal-ml/shoal/domain/parallel"
	"github.com/shoal-ml/shoal/store"
)

// maxError bounds a kept error text.
const maxError = 8 << 10

// abortNames is how many failed items an abort's message names.
const abortNames = 10

// Complete records one try of a mini-batch: done keeps its rows for good;
// failed or timeout spends a try (failed after the last); a report of a
// try the ledger has given away since is stale and changes nothing.
func (s *Service) Complete(ctx context.Context, c *Caller, req pproto.CompleteRequest) (*pproto.CompleteResponse, error) {
	switch req.Outcome {
	case pproto.OutcomeDone, pproto.OutcomeFailed, pproto.OutcomeTimeout:
	default:
		return nil, core.FieldErrorf("outcome", "%q is not an outcome (done, failed, timeout)", req.Outcome)
	}
	if err := c.checkRank(req.Rank); err != nil {
		return nil, err
	}
	if req.Items < 0 {
		return nil, core.FieldErrorf("items", "must be 0 or more, not %d", req.Items)
	}
	out := &pproto.CompleteResponse{}
	err := s.store.Update(ctx, func(tx store.Tx) error {
		*out = pproto.CompleteResponse{} // a run again starts over
		p, err := tx.GetParallelPlan(c.Workspace, c.Job)
		if err != nil {
			return err
		}
		if req.Index < 0 || req.Index >= p.MiniBatches {
			return core.FieldErrorf("index", "%d is not a mini-batch of the plan (0 to %d)", req.Index, p.MiniBatches-1)
		}
		b, err := tx.GetParallelBatch(c.Workspace, c.Job, req.Index)
		if core.ErrorCode(err) == core.ENOTFOUND {
			out.State = pproto.CompletedStale
			return nil
		} else if err != nil {
			return err
		}
		if b.State != pproto.BatchLeased || b.Try != req.Try || b.AttemptID != c.AttemptID || b.Rank != req.Rank {
			out.State = pproto.CompletedStale
			return nil
		}
		now := tx.Now()
		b.Items = req.Items
		switch req.Outcome {
		case pproto.OutcomeDone:
			b.State, b.Rows, b.FailedItems, b.FinishedAt, b.Error = pproto.BatchDone, req.Rows, clip(req.FailedItems), now, ""
			out.State = pproto.CompletedDone
		default:
			why := cut(req.Error)
			if why == "" {
				why = "run(mini_batch) " + req.Outcome
			}
			if req.Outcome == pproto.OutcomeTimeout {
				why = fmt.Sprintf("timed out after retry_settings.timeout (%d s): %s", c.Spec.TimeoutSeconds(), why)
			}
			out.State = pproto.CompletedRetry
			if final, err := failTry(tx, c, b, why, clip(req.FailedItems), now); err != nil {
				return err
			} else if final {
				out.State = pproto.CompletedFailed
			}
		}
		if err := tx.PutParallelBatch(b); err != nil {
			return err
		}
		if len(b.FailedItems) > 0 {
			if err := checkThresholds(tx, c, p); err != nil {
				return err
			}
		}
		out.Abort = p.Aborted
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// cut bounds a text the ledger keeps, at a character's start, without
// NUL bytes (PostgreSQL's text holds none).
func cut(s string) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
	return prefix(s, maxError)
}

// prefix bounds s to n bytes at a character's start, marking the cut.
func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// clip bounds failed items' names and errors.
func clip(items []pproto.FailedItem) []pproto.FailedItem {
	for i := range items {
		items[i].Item, items[i].Error = cut(items[i].Item), cut(items[i].Error)
	}
	return items
}

// checkThresholds aborts the job's ledger (p.Aborted, written) when more
// mini-batches failed than mini_batch_error_threshold or more items than
// error_threshold allow (-1: any number), naming up to 10 failed items.
func checkThresholds(tx store.Tx, c *Caller, p *pproto.Plan) error {
	if p.Aborted != "" {
		return nil
	}
	counts, err := tx.CountParallelBatches(c.Workspace, c.Job, tx.Now())
	if err != nil {
		return err
	}
	var why string
	if t := job.Threshold(c.Spec.MiniBatchErrorThreshold); t >= 0 && counts.Failed > t {
		why = fmt.Sprintf("%d mini-batches failed, more than mini_batch_error_threshold (%d)", counts.Failed, t)
	} else if t := job.Threshold(c.Spec.ErrorThreshold); t >= 0 && counts.FailedItems > t {
		why = fmt.Sprintf("%d items failed, more than error_threshold (%d)", counts.FailedItems, t)
	} else {
		return nil
	}
	var names []string
	err = eachFailed(tx, c.Workspace, c.Job, func(_ int, it pproto.FailedItem) bool {
		names = append(names, fmt.Sprintf("%s (%s)", it.Item, firstLine(it.Error)))
		return len(names) < abortNames
	})
	if err != nil {
		return err
	}
	p.Aborted = why + ": " + strings.Join(names, "; ")
	if more := counts.FailedItems - len(names); more > 0 {
		p.Aborted += fmt.Sprintf("; and %d more (errors.txt lists them)", more)
	}
	return tx.UpdateParallelPlan(p)
}

// firstLine is an error's last line that says something (a traceback's
// exception), bounded.
func firstLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return prefix(strings.TrimSpace(lines[len(lines)-1]), 200)
}

// pageSize is how many mini-batch records are read at once.
const pageSize = 1000

// eachBatch calls fn with the job's records in state, by index, until fn
// returns false.
func eachBatch(tx store.Tx, workspace, jobName, state string, fn func(*pproto.Batch) bool) error {
	from := 0
	for {
		bs, err := tx.ListParallelBatches(workspace, jobName, state, from, pageSize)
		if err != nil {
			return err
		}
		for _, b := range bs {
			if !fn(b) {
				return nil
			}
		}
		if len(bs) < pageSize {
			return nil
		}
		from = bs[len(bs)-1].Index + 1
	}
}

// eachFailed calls fn with every failed item, by mini-batch index, until
// fn returns false.
func eachFailed(tx store.Tx, workspace, jobName string, fn func(index int, it pproto.FailedItem) bool) error {
	return eachBatch(tx, workspace, jobName, "", func(b *pproto.Batch) bool {
		for _, it := range b.FailedItems {
			if !fn(b.Index, it) {
				return false
			}
		}
		return true
	})
}
