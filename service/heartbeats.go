package service

import (
	"context"
	"sync"

	"github.com/shoal-ml/shoal"
)

// heartbeatBatch writes node leases by group commit: a heartbeat that
// finds no write in progress writes its lease at once (a lone node, and
// every test with a fake clock, see no difference); one that arrives while
// a write is in progress leaves its lease to that writer, which writes
// every lease that arrived meanwhile in one more transaction before it
// returns. With thousands of nodes heartbeating, a transaction per
// heartbeat queued behind SQLite's single writer and took most of the
// server's CPU; batched, a few transactions a second carry them all.
type heartbeatBatch struct {
	mu      sync.Mutex
	writing bool
	pending map[string]bool
}

func newHeartbeatBatch() *heartbeatBatch {
	return &heartbeatBatch{pending: map[string]bool{}}
}

// beat renews nodeID's lease: it writes it (and any others waiting) or
// hands it to the write in progress. The lease is the transaction's time.
// An error is returned only to the heartbeat that wrote the batch; a lease
// lost with a failed batch is written by the node's next heartbeat.
func (b *heartbeatBatch) beat(ctx context.Context, store shoal.Store, nodeID string) error {
	b.mu.Lock()
	b.pending[nodeID] = true
	if b.writing {
		b.mu.Unlock()
		return nil
	}
	b.writing = true
	var err error
	for len(b.pending) > 0 {
		ids := b.pending
		b.pending = map[string]bool{}
		b.mu.Unlock()
		// Others' leases ride on this request: its cancellation must not
		// drop them.
		err = store.Update(context.WithoutCancel(ctx), func(tx shoal.Tx) error {
			for id := range ids {
				n, err := tx.GetNode(id)
				if shoal.ErrorCode(err) == shoal.ENOTFOUND {
					continue // released meanwhile
				} else if err != nil {
					return err
				}
				n.LastHeartbeat = tx.Now()
				if err := tx.UpdateNode(n); err != nil {
					return err
				}
			}
			return nil
		})
		b.mu.Lock()
		if err != nil {
			break
		}
	}
	b.writing = false
	b.mu.Unlock()
	return err
}
