package live

import (
	"context"
	"maps"
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
	// latest is the latest committed pass's reasons, which Get and List
	// answer; nil unless this replica leads (until its first pass).
	latest map[string]scheduler.Reason
	// stored is what the store holds (see storedReasons).
	stored storedReasons
	// flushed is when reasons whose sentence alone changed were last
	// written.
	flushed time.Time
	// gen counts the changes committed (and Forget): a pass planned
	// against an older stored than the one it commits over did not see
	// what was written in between (two passes planned, then committed,
	// one after the other), and its Committed cannot say what the store
	// holds.
	gen uint64
}

// storedReasons is what the store holds of the reasons: base, the
// reasons of a pass that were all written (the last one that wrote
// sentences, or what the store held when this replica began to lead),
// with those written since over it (written) and those deleted since
// taken out of it (gone). base is that pass's own map, not a copy: a pass
// between two writes of sentences moves every sentence of a long queue
// ("waiting behind N jobs") and writes none of them, and keeping what the
// store held as its difference from the latest pass built a copy of
// every one on every such pass (100,000 reasons, some 7 MB). Between
// writes of sentences (at most every MessageEvery) the leader so holds
// two passes' maps, base and latest, and a third while a pass plans.
type storedReasons struct {
	base    map[string]scheduler.Reason
	written map[string]scheduler.Reason // small: codes changed between flushes
	gone    map[string]bool
}

// get returns what the store holds of a job's reason.
func (s storedReasons) get(id string) (scheduler.Reason, bool) {
	if v, ok := s.written[id]; ok {
		return v, true
	}
	if s.gone[id] {
		return scheduler.Reason{}, false
	}
	v, ok := s.base[id]
	return v, ok
}

// each calls fn with the id of every reason the store holds.
func (s storedReasons) each(fn func(id string)) {
	for id := range s.base {
		if _, over := s.written[id]; !over && !s.gone[id] {
			fn(id)
		}
	}
	for id := range s.written {
		fn(id)
	}
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
	stored  storedReasons               // what the store held when the pass planned
	gen     uint64                      // Reasons.gen when the pass planned
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
	if len(c.del) > 0 {
		del := make([]*jobkind.WaitReason, len(c.del))
		for i, id := range c.del {
			ws, job := splitID(id)
			del[i] = &jobkind.WaitReason{Workspace: ws, Job: job}
		}
		return tx.DeleteWaitReasons(del)
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
	return scheduler.NewReason(scheduler.ReasonCode(w.Code), w.Message)
}

// Plan says what a pass writes; see WaitReasons.
func (r *Reasons) Plan(ctx context.Context, now time.Time, reasons map[string]scheduler.Reason) (*ReasonChanges, error) {
	r.mu.Lock()
	latest, stored, flushed, gen := r.latest, r.stored, r.flushed, r.gen
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
		stored = storedReasons{base: make(map[string]scheduler.Reason, len(rows))}
		for _, w := range rows {
			stored.base[w.Workspace+"/"+w.Job] = reasonOf(w)
		}
	}
	// A pass that may write sentences leaves the store as current as
	// the pass; the next sentence alone changed waits MessageEvery.
	c := &ReasonChanges{all: reasons, stored: stored, gen: gen, flush: now.Sub(flushed) >= r.every, flushAt: now}
	if c.all == nil {
		c.all = map[string]scheduler.Reason{} // non-nil: this replica leads
	}
	var puts []string
	for id, v := range reasons {
		old, ok := stored.get(id)
		switch {
		case !ok || old.Code() != v.Code():
			c.Changed = append(c.Changed, id)
			puts = append(puts, id)
		case c.flush && !old.Same(v):
			puts = append(puts, id)
		}
		// A sentence alone changed waits for a pass that flushes: the
		// store keeps the old one, which stored goes on saying.
	}
	stored.each(func(id string) {
		if _, ok := reasons[id]; !ok {
			c.del = append(c.del, id)
		}
	})
	slices.Sort(c.Changed)
	slices.Sort(puts)
	slices.Sort(c.del)
	for _, id := range puts {
		ws, job := splitID(id)
		v := reasons[id]
		c.put = append(c.put, &jobkind.WaitReason{Workspace: ws, Job: job, Code: string(v.Code()), Message: v.Message()})
	}
	return c, nil
}

// Committed records a pass's written changes; see WaitReasons.
func (r *Reasons) Committed(c *ReasonChanges) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gen++
	if c.gen != r.gen-1 {
		// Another pass's changes were committed after this one
		// planned: what this one compared with is not what the store
		// held, and its changes over it would not say what the store
		// holds now (a row that pass wrote, which this one did not
		// delete, would stay forever). Read the store again, as a new
		// leader does: the next pass plans against it.
		r.latest, r.stored, r.flushed = nil, storedReasons{}, time.Time{}
		return
	}
	r.latest = c.all
	if c.flush {
		// Every reason of the pass was written: the store holds all.
		r.stored, r.flushed = storedReasons{base: c.all}, c.flushAt
		return
	}
	st := storedReasons{base: c.stored.base, written: maps.Clone(c.stored.written), gone: maps.Clone(c.stored.gone)}
	for _, w := range c.put {
		id := w.Workspace + "/" + w.Job
		if st.written == nil {
			st.written = map[string]scheduler.Reason{}
		}
		st.written[id] = c.all[id]
		delete(st.gone, id)
	}
	for _, id := range c.del {
		delete(st.written, id)
		if _, ok := st.base[id]; ok {
			if st.gone == nil {
				st.gone = map[string]bool{}
			}
			st.gone[id] = true
		}
	}
	r.stored = st
}

// Forget drops this replica's memory; see WaitReasons.
func (r *Reasons) Forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latest, r.stored, r.flushed = nil, storedReasons{}, time.Time{}
	r.gen++
}
