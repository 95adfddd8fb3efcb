package agentapi

import (
	"context"
	"sync"
	"time"

	storekind "github.com/shoal-ml/shoal/store"
)

// heartbeatBatch writes node leases by group commit. Heartbeats join the
// round that is gathering; the first to join leads it: it waits for the
// write in progress, if any, closes the round to newcomers and writes every
// lease in it in one transaction. The others wait for that write and get its
// result. So at most one round is writing and one gathering, no caller waits
// longer than two writes and a cooling (below), and each sees only its own
// round's error. A lone heartbeat finds nothing in progress and is written
// at once, or after the cooling of the round before. With thousands of nodes
// heartbeating, a transaction per heartbeat queued behind SQLite's single
// writer and took most of the server's CPU; batched, a few transactions a
// second carry them all.
//
// After each write the next round gathers for a while before it writes
// (coolPerLease for each lease of the round just written, at most
// maxCool). Rounds that each began as soon as the last ended held
// about one lease each at 10,000 nodes (1,006 write transactions a second
// for 994 heartbeats in bench/scale), and their transactions (a begin and
// a commit each, two thirds of their cost) took 11 % of the server's CPU,
// queued before every other writer. Cooling
// in proportion to the last round grows a busy fleet's rounds to maxCool's
// worth of heartbeats (20 at 1,000 a second), while after a round of one
// (a small fleet) a heartbeat waits at most coolPerLease, and only if it
// comes within that time. A round of one must cool too: otherwise rounds
// that are written faster than heartbeats arrive never grow.
//
// A sync that answers at once (a job to start or stop, an exit: what
// answerNow says) is urgent: its node waits for the answer, so the round
// it joins does not wait for the cooling, only for a write in progress.
// The parked syncs, nearly all of a large fleet's, are not urgent.
type heartbeatBatch struct {
	mu      sync.Mutex
	idle    *sync.Cond // signalled when a write or a cooling ends, or a round turns urgent
	writing bool
	cooling bool
	next    *heartbeatRound // the round gathering, nil when none is
	// coolPer and maxCool pace the rounds (coolPerLease and maxCool;
	// tests set their own).
	coolPer, maxCool time.Duration
}

// coolPerLease and maxCool pace the rounds (heartbeatBatch): a parked
// sync's lease renewal may wait up to maxCool more, which a lease of
// seconds (node_lease, 10 s by default) does not notice.
const (
	coolPerLease = 2 * time.Millisecond
	maxCool      = 20 * time.Millisecond
)

// heartbeatRound is one group-committed write.
type heartbeatRound struct {
	ids    map[string]bool
	urgent bool          // a member's sync answers at once: no cooling
	done   chan struct{} // closed when written; err is then set
	err    error
}

func newHeartbeatBatch() *heartbeatBatch {
	b := &heartbeatBatch{coolPer: coolPerLease, maxCool: maxCool}
	b.idle = sync.NewCond(&b.mu)
	return b
}

// beat renews nodeID's lease, returning once it is written (or ctx ends;
// the lease is then still written with its round). The lease is the
// transaction's time. urgent says its sync answers at once.
func (b *heartbeatBatch) beat(ctx context.Context, store storekind.Store, nodeID string, urgent bool) error {
	b.mu.Lock()
	r, lead := b.next, false
	if r == nil {
		r, lead = &heartbeatRound{ids: map[string]bool{}, done: make(chan struct{})}, true
		b.next = r
	}
	r.ids[nodeID] = true
	if urgent && !r.urgent {
		r.urgent = true
		b.idle.Broadcast() // the round's leader, if it waits for a cooling
	}
	if !lead {
		b.mu.Unlock()
		select {
		case <-r.done:
			return r.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// Gather while the previous round writes and cools (unless this
	// one turns urgent), then close this one.
	for b.writing || b.cooling && !r.urgent {
		b.idle.Wait()
	}
	b.writing, b.next = true, nil
	b.mu.Unlock()

	// Others' leases ride on this request: its cancellation must not drop
	// them.
	ids := make([]string, 0, len(r.ids))
	for id := range r.ids {
		ids = append(ids, id)
	}
	// The leases alone, a statement for the round (a node released
	// meanwhile is skipped): no read of a node, no document written.
	r.err = store.Update(context.WithoutCancel(ctx), func(tx storekind.Tx) error {
		return tx.RenewNodeLeases(ids)
	})
	close(r.done)
	cool := min(time.Duration(len(ids))*b.coolPer, b.maxCool)
	b.mu.Lock()
	b.writing, b.cooling = false, true
	b.idle.Broadcast() // an urgent round's leader waits for the write alone
	b.mu.Unlock()
	// The pace is no decision: a real timer, whatever the clock.
	time.AfterFunc(cool, b.cooled)
	return r.err
}

// cooled ends a round's cooling.
func (b *heartbeatBatch) cooled() {
	b.mu.Lock()
	b.cooling = false
	b.idle.Broadcast() // the gathering round's leader, if one waits
	b.mu.Unlock()
}
