package postgres_test

import (
	"errors"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/postgres"
)

// openOn opens a store on url, closed at cleanup.
func openOn(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), postgres.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// seedCompute stores workspace ws with compute c (its Description "0").
func seedCompute(t *testing.T, db store.Store) {
	t.Helper()
	err := db.Update(t.Context(), func(tx store.Tx) error {
		if err := tx.InsertWorkspace(&core.Workspace{Name: "ws", Location: "local"}); err != nil {
			return err
		}
		return tx.InsertCompute(&compute.Compute{Workspace: "ws", Version: 1,
			ComputeSpec: compute.ComputeSpec{Name: "c", Type: compute.ComputeTypeCluster, Description: "0"}})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The Updates of one batch share their reads of a compute, but an Update
// that changed the compute and then failed (rolled back to its savepoint)
// leaves nothing behind: the next Update in the same transaction reads
// the compute as stored.
func TestBatchReadsAfterAFailedUpdate(t *testing.T) {
	pg := testpg.Start(t)
	db := openOn(t, pg.NewDatabase(t))
	seedCompute(t, db)
	release := make(chan struct{})
	running := make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- db.Update(t.Context(), func(tx store.Tx) error {
			close(running)
			<-release
			return nil
		})
	}()
	<-running
	// Queued behind the held Update, these two share the next batch, in
	// this order (the second starts once the first is queued).
	failed := errors.New("refused after the write")
	var wg sync.WaitGroup
	var errA, errB error
	var seen string
	wg.Add(2)
	go func() {
		defer wg.Done()
		errA = db.Update(t.Context(), func(tx store.Tx) error {
			c, err := tx.GetCompute("ws", "c")
			if err != nil {
				return err
			}
			c.Description = "rolled back"
			c.Version++
			if err := tx.UpdateCompute(c); err != nil {
				return err
			}
			if _, err := tx.GetCompute("ws", "c"); err != nil {
				return err
			}
			return failed
		})
	}()
	waitQueued(t, db, 1)
	go func() {
		defer wg.Done()
		errB = db.Update(t.Context(), func(tx store.Tx) error {
			c, err := tx.GetCompute("ws", "c")
			if err == nil {
				seen = c.Description
			}
			return err
		})
	}()
	waitQueued(t, db, 2)
	close(release)
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if !errors.Is(errA, failed) || errB != nil {
		t.Fatalf("Updates: %v, %v; want the first refused, the second fine", errA, errB)
	}
	if seen != "0" {
		t.Fatalf("the Update after a failed one read Description %q, want %q as stored", seen, "0")
	}
}

// waitQueued waits until n Updates wait behind the one being written.
func waitQueued(t *testing.T, db *postgres.DB, n int) {
	t.Helper()
	for db.Waiting() < n {
		if t.Context().Err() != nil {
			t.Fatal("Updates never queued")
		}
		runtime.Gosched()
	}
}

// Two servers on one database incrementing a counter kept in a compute,
// each read-modify-write in its own Update with repeated reads, at the
// same time: no increment is lost and a stale ETag is still refused.
func TestTwoServersReadModifyWrite(t *testing.T) {
	pg := testpg.Start(t)
	url := pg.NewDatabase(t)
	a, b := openOn(t, url), openOn(t, url)
	seedCompute(t, a)
	const each = 25
	var wg sync.WaitGroup
	errs := make(chan error, 2*each)
	for _, db := range []*postgres.DB{a, b} {
		for range each {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- db.Update(t.Context(), func(tx store.Tx) error {
					c, err := tx.GetCompute("ws", "c")
					if err != nil {
						return err
					}
					again, err := tx.GetCompute("ws", "c")
					if err != nil {
						return err
					}
					if again.ETag != c.ETag {
						return errors.New("two reads in one transaction disagree")
					}
					n, err := strconv.Atoi(c.Description)
					if err != nil {
						return err
					}
					c.Description = strconv.Itoa(n + 1)
					c.Version++
					return tx.UpdateCompute(c)
				})
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var stale string
	err := b.View(t.Context(), func(tx store.Tx) error {
		c, err := tx.GetCompute("ws", "c")
		if err != nil {
			return err
		}
		if c.Description != strconv.Itoa(2*each) || c.Version != 1+2*each {
			t.Errorf("after %d increments from two servers: counter %s, version %d", 2*each, c.Description, c.Version)
		}
		stale = compute.ETag(c.Version - 1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A write that names an old ETag is refused as before (the check the
	// services make in their Update, against what it reads there).
	err = a.Update(t.Context(), func(tx store.Tx) error {
		c, err := tx.GetCompute("ws", "c")
		if err != nil {
			return err
		}
		if c.ETag != stale {
			return core.Errorf(core.EPRECONDITION, "etag %s does not match %s", stale, c.ETag)
		}
		return errors.New("the stale ETag matched")
	})
	if core.ErrorCode(err) != core.EPRECONDITION {
		t.Fatalf("Update with a stale ETag: %v, want a precondition failure", err)
	}
}
