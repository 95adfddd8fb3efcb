// Package blobblocks discards the Blob endpoint's staged blocks that no
// block list committed within Azure's week: a block list naming one of
// them afterwards is InvalidBlockList, as on Azure. Their content is an
// artifact of the workspace's file store, which may be shared (artifacts
// are content-addressed) and stays, counting against the workspace's
// storage quota (docs/limitations.md).
package blobblocks

import (
	"context"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/store"
)

// Lifetime is how long a staged block waits for its block list: Azure
// discards uncommitted blocks after 7 days.
const Lifetime = 7 * 24 * time.Hour

// Every is how often the loop sweeps: a block outlives Lifetime by at
// most this much.
const Every = time.Hour

// Services is what the loop asks of the request services.
type Services interface {
	loop.Base
}

// Loop discards stale staged blocks.
type Loop struct {
	s Services

	mu   sync.Mutex
	last time.Time
}

// New returns the loop over s.
func New(s Services) *Loop { return &Loop{s: s} }

// RunOnce discards, at most once every Every, the blocks staged before
// now less Lifetime.
func (l *Loop) RunOnce(ctx context.Context, now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < Every {
		return nil
	}
	var n int64
	err := l.s.Store().Update(ctx, func(tx store.Tx) (err error) {
		n, err = tx.DeleteBlobBlocksStagedBefore(now.Add(-Lifetime))
		return err
	})
	if err != nil {
		return err // tried again next pass
	}
	l.last = now
	if n > 0 {
		l.s.Logger().Info("discarded staged blocks never committed", "blocks", n, "staged_before", now.Add(-Lifetime))
	}
	return nil
}
