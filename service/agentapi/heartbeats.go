package agentapi

import (
	"context"
	"sync"

	"github.com/shoal-ml/shoal/domain/core"
	storekind "github.com/shoal-ml/shoal/store"
)

// heartbeatBatch writes node leases by group commit. Heartbeats join the
// round that is gathering; the first to join leads it: it waits for the
// write in progress, if any, closes the round to newcomers and writes every
// lease in it in one transaction. The others wait for that write and get its
// result. So at most one round is writing and one gathering, no caller waits
// longer than two writes, and each sees only its own round's error. A lone
// heartbeat (and every test with a fake clock) finds nothing in progress and
// is written at once. With thousands of nodes heartbeating, a transaction
// per heartbeat queued behind SQLite's single writer and took most of the
// server's CPU; batched, a few transactions a second carry them all.
type heartbeatBatch struct {
	mu      sync.Mutex
	idle    *sync.Cond // signalled when a write ends
	writing bool
	next    *heartbeatRound // the round gathering, nil when none is
}

// heartbeatRound is one group-committed write.
type heartbeatRound struct {
	ids  map[string]bool
	done chan struct{} // closed when written; err is then set
	err  error
}

func newHeartbeatBatch() *heartbeatBatch {
	b := &heartbeatBatch{}
	b.idle = sync.NewCond(&b.mu)
	return b
}

// beat renews nodeID's lease, returning once it is written (or ctx ends;
// the lease is then still written with its round). The lease is the
// transaction's time.
func (b *heartbeatBatch) beat(ctx context.Context, store storekind.Store, nodeID string) error {
	b.mu.Lock()
	r, lead := b.next, false
	if r == nil {
		r, lead = &heartbeatRound{ids: map[string]bool{}, done: make(chan struct{})}, true
		b.next = r
	}
	r.ids[nodeID] = true
	if !lead {
		b.mu.Unlock()
		select {
		case <-r.done:
			return r.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// Gather while the previous round writes, then close this one.
	for b.writing {
		b.idle.Wait()
	}
	b.writing, b.next = true, nil
	b.mu.Unlock()

	// Others' leases ride on this request: its cancellation must not drop
	// them.
	r.err = store.Update(context.WithoutCancel(ctx), func(tx storekind.Tx) error {
		for id := range r.ids {
			// The lease alone: no read of the node, no document written.
			if err := tx.RenewNodeLease(id); err != nil && core.ErrorCode(err) != core.ENOTFOUND {
				return err // (a node not found was released meanwhile)
			}
		}
		return nil
	})
	close(r.done)
	b.mu.Lock()
	b.writing = false
	b.idle.Broadcast() // the gathering round's leader, if one waits
	b.mu.Unlock()
	return r.err
}
