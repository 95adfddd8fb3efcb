package blobblocks

import (
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/blobs"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlite"
)

// clock is the test's time, the store's and the loop's.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// base is loop.Base over a real store.
type base struct{ db store.Store }

func (b base) Store() store.Store        { return b.db }
func (b base) Catalog() *catalog.Catalog { return nil }
func (b base) Logger() *slog.Logger      { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// A block never committed is discarded once it is a week old, at the
// first pass after (the loop sweeps once an hour), and not before; a
// younger block stays.
func TestStaleBlocksAreDiscardedAfterAWeek(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	c := &clock{t: t0}
	db, err := sqlite.Open(t.Context(), sqlite.Config{Path: filepath.Join(t.TempDir(), "s.db"), Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	stage := func(blob string) {
		t.Helper()
		if err := db.Update(t.Context(), func(tx store.Tx) error {
			return tx.PutBlobBlock(&blobs.Block{Workspace: "ws", Container: "workspaceblobstore", Blob: blob, ID: "QUE=", Artifact: "sha256:a", Size: 1})
		}); err != nil {
			t.Fatal(err)
		}
	}
	staged := func(blob string) bool {
		t.Helper()
		var n int
		if err := db.View(t.Context(), func(tx store.Tx) error {
			l, err := tx.ListBlobBlocks("ws", "workspaceblobstore", blob)
			n = len(l)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	l := New(base{db})
	stage("old")
	if err := l.RunOnce(t.Context(), t0.Add(Lifetime-time.Minute)); err != nil || !staged("old") {
		t.Fatalf("a block a minute short of a week: %v, staged %v", err, staged("old"))
	}
	c.set(t0.Add(Lifetime - time.Second))
	stage("young")
	// Within the hour of the last sweep: not yet.
	if err := l.RunOnce(t.Context(), t0.Add(Lifetime+time.Minute)); err != nil || !staged("old") {
		t.Fatalf("a sweep within the hour of the last: %v, staged %v", err, staged("old"))
	}
	if err := l.RunOnce(t.Context(), t0.Add(Lifetime+Every)); err != nil {
		t.Fatal(err)
	}
	if staged("old") || !staged("young") {
		t.Errorf("after a week: old staged %v (want discarded), young staged %v (want kept)", staged("old"), staged("young"))
	}
}
