package live

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/domain/core"
	jobkind "github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
)

// WaitReasons is why each queued job waits, from the leader's latest
// scheduler pass, the same on every replica: only the leader schedules,
// while any replica shows jobs. Jobs are named "workspace/name", as the
// scheduler names them.
//
// A pass's reasons are written in two steps, so that they join the pass's
// own transaction (its placements and "waiting" events): Plan says what
// to write, ReasonChanges.Write writes it in the transaction, and
// Committed records that it committed.
type WaitReasons interface {
	// Get returns a queued job's reason as of tx; false when it has none
	// (not waiting, or submitted after the latest pass).
	Get(tx store.Tx, workspace, job string) (scheduler.Reason, bool, error)
	// List returns the reasons of a workspace's jobs ("" for all) as of
	// tx, by "workspace/name".
	List(tx store.Tx, workspace string) (map[string]scheduler.Reason, error)
	// Plan compares a pass's reasons, at now, with those written before
	// and returns what to write. It reads the stored reasons on the first
	// pass after NewReasons or Forget. The pass keeps reasons: the
	// caller does not change it afterwards.
	Plan(ctx context.Context, now time.Time, reasons map[string]scheduler.Reason) (*ReasonChanges, error)
	// Committed records that c was written and committed; c's reasons
	// are then this replica's answer to Get and List.
	Committed(c *ReasonChanges)
	// Forget drops what this replica knows of the reasons: it no longer
	// leads, and another replica's passes write them now.
	Forget()
}

// ReasonsConfig configures Reasons.
type ReasonsConfig struct {
	// Store keeps the reasons.
	Store store.Store
	// MessageEvery bounds how often reasons whose sentence alone changed
	// are written, and so how late another replica shows a new sentence
	// ("waiting behind 2 jobs" after "behind 3"); a new code is written
	// with the pass that found it.
	MessageEvery time.Duration
}

// Reasons is the store-backed WaitReasons. The leader keeps its latest
// pass's reasons in memory and answers from them, exactly as one server
// did before; the other replicas read the store.
//
// Writes are bounded: a pass writes the reasons of jobs that started
// waiting or whose code changed, deletes those of jobs that no longer
// wait, and writes reasons whose sentence alone changed at most every
// MessageEvery. A long queue's sentences change on every move of its head
// ("waiting behind N jobs"), so writing each would rewrite the whole
// queue on every placement.
type Reasons struct {
	store store.Store
	every time.Duration

	mu sync.Mutex
	// latest is the latest committed pass's reasons; nil unless this
	// replica leads (until its first pass).
	latest map[string]scheduler.Reason
	// behind holds, of the jobs in latest, those whose stored reason is
	// not latest's (a sentence alone changed, written later): what the
	// store holds is latest with behind over it. Kept as the difference,
	// not as a second map of every waiting job (by its entries' sizes,
	// about 10 MB at 100,000 queued jobs held between passes, and a third
	// map while a pass planned the next one).
	behind map[string]scheduler.Reason
	// flushed is when reasons whose sentence alone changed were last
	// written.
	flushed time.Time
}

var _ WaitReasons = (*Reasons)(nil)

// NewReasons returns wait reasons kept in cfg.Store.
func NewReasons(cfg ReasonsConfig) *Reasons {
	return &Reasons{store: cfg.Store, every: cfg.MessageEvery}
}

// ReasonChanges is what one pass writes of the reasons.
type ReasonChanges struct {
	// Changed are the jobs that started waiting or whose reason's code
	// changed, sorted: each is worth a "waiting" event.
	Changed []string

	put     []*jobkind.WaitReason
	del     []string
	behind  map[string]scheduler.Reason // where the store's reasons once written are not all's
	all     map[string]scheduler.Reason // the pass's reasons
	flush   bool                        // sentences alone changed are written: all is stored
	flushAt time.Time
}

// Empty reports whether there is nothing to write.
func (c *ReasonChanges) Empty() bool { return len(c.put) == 0 && len(c.del) == 0 }

// Write writes the changes in tx.
func (c *ReasonChanges) Write(tx store.Tx) error {
	if len(c.put) > 0 {
		if err := tx.PutWaitReasons(c.put); err != nil {
			return err
		}
	}
	for _, id := range c.del {
		ws, job := splitID(id)
		if err := tx.DeleteWaitReason(ws, job); err != nil {
			return err
		}
	}
	return nil
}

// splitID splits "workspace/name"; workspace names hold no slash.
func splitID(id string) (workspace, job string) {
	ws, job, _ := strings.Cut(id, "/")
	return ws, job
}

// Get returns a job's reason; see WaitReasons.
func (r *Reasons) Get(tx store.Tx, workspace, job string) (scheduler.Reason, bool, error) {
	r.mu.Lock()
	if r.latest != nil {
		v, ok := r.latest[workspace+"/"+job]
		r.mu.Unlock()
		return v, ok, nil
	}
	r.mu.Unlock()
	w, err := tx.GetWaitReason(workspace, job)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return scheduler.Reason{}, false, nil
	} else if err != nil {
		return scheduler.Reason{}, false, err
	}
	return reasonOf(w), true, nil
}

// List returns a workspace's reasons; see WaitReasons.
func (r *Reasons) List(tx store.Tx, workspace string) (map[string]scheduler.Reason, error) {
	r.mu.Lock()
	if r.latest != nil {
		out := map[string]scheduler.Reason{}
		for id, v := range r.latest {
			if ws, _ := splitID(id); workspace == "" || strings.EqualFold(ws, workspace) {
				out[id] = v
			}
		}
		r.mu.Unlock()
		return out, nil
	}
	r.mu.Unlock()
	ws, err := tx.ListWaitReasons(workspace)
	if err != nil {
		return nil, err
	}
	out := make(map[string]scheduler.Reason, len(ws))
	for _, w := range ws {
		out[w.Workspace+"/"+w.Job] = reasonOf(w)
	}
	return out, nil
}

func reasonOf(w *jobkind.WaitReason) scheduler.Reason {
	return scheduler.Reason{Code: scheduler.ReasonCode(w.Code), Message: w.Message}
}

// Plan says what a pass writes; see WaitReasons.
func (r *Reasons) Plan(ctx context.Context, now time.Time, reasons map[string]scheduler.Reason) (*ReasonChanges, error) {
	r.mu.Lock()
	latest, behind, flushed := r.latest, r.behind, r.flushed
	r.mu.Unlock()
	if latest == nil {
		// The first pass since this replica began to lead: the store
		// holds what the previous leader wrote.
		var rows []*jobkind.WaitReason
		if err := r.store.View(ctx, func(tx store.Tx) (err error) {
			rows, err = tx.ListWaitReasons("")
			return err
		}); err != nil {
			return nil, err
		}
		latest, behind = make(map[string]scheduler.Reason, len(rows)), nil
		for _, w := range rows {
			latest[w.Workspace+"/"+w.Job] = reasonOf(w)
		}
	}
	// stored is what the store holds of a job's reason.
	stored := func(id string) (scheduler.Reason, bool) {
		if v, ok := behind[id]; ok {
			return v, true
		}
		v, ok := latest[id]
		return v, ok
	}
	// A pass that may write sentences leaves the store as current as
	// the pass; the next sentence alone changed waits MessageEvery.
	c := &ReasonChanges{all: reasons, flush: now.Sub(flushed) >= r.every, flushAt: now}
	if c.all == nil {
		c.all = map[string]scheduler.Reason{} // non-nil: this replica leads
	}
	var puts []string
	for id, v := range reasons {
		old, ok := stored(id)
		switch {
		case !ok || old.Code != v.Code:
			c.Changed = append(c.Changed, id)
			puts = append(puts, id)
		case old.Message != v.Message && c.flush:
			puts = append(puts, id)
		case old.Message != v.Message:
			// Written by a later pass: the store keeps the old one.
			if c.behind == nil {
				c.behind = map[string]scheduler.Reason{}
			}
			c.behind[id] = old
		}
	}
	for id := range latest {
		if _, ok := reasons[id]; !ok {
			c.del = append(c.del, id)
		}
	}
	slices.Sort(c.Changed)
	slices.Sort(puts)
	slices.Sort(c.del)
	for _, id := range puts {
		ws, job := splitID(id)
		v := reasons[id]
		c.put = append(c.put, &jobkind.WaitReason{Workspace: ws, Job: job, Code: string(v.Code), Message: v.Message})
	}
	return c, nil
}

// Committed records a pass's written changes; see WaitReasons.
func (r *Reasons) Committed(c *ReasonChanges) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latest, r.behind = c.all, c.behind
	if c.flush {
		r.flushed = c.flushAt
	}
}

// Forget drops this replica's memory; see WaitReasons.
func (r *Reasons) Forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latest, r.behind, r.flushed = nil, nil, time.Time{}
}
