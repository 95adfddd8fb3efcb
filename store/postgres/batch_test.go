package postgres_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/postgres"
)

// Updates that write at the same time share transactions (the first is
// held while the others call Update), and one whose statement PostgreSQL
// refuses — which aborts the whole transaction on PostgreSQL — fails
// alone: the others' writes are committed.
func TestUpdatesBatchedAndFailingAlone(t *testing.T) {
	db, release := openHeld(t)
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.Update(t.Context(), func(tx store.Tx) error {
				v := "v"
				if i == 7 {
					v = "nul\x00byte" // refused by PostgreSQL: invalid UTF-8 for text
				}
				return tx.PutSetting(fmt.Sprint("k", i), v)
			})
		}()
	}
	release()
	wg.Wait()
	err := db.View(t.Context(), func(tx store.Tx) error {
		for i := 0; i < n; i++ {
			_, gerr := tx.GetSetting(fmt.Sprint("k", i))
			if i == 7 {
				if errs[i] == nil || core.ErrorCode(gerr) != core.ENOTFOUND {
					t.Errorf("the refused write: Update %v, read back %v", errs[i], gerr)
				}
				continue
			}
			if errs[i] != nil || gerr != nil {
				t.Errorf("Update %d: %v, read back %v", i, errs[i], gerr)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// openHeld opens a store on a fresh database and holds an Update in
// progress, so that the Updates called next wait and share the next
// batch; release lets it commit and fails the test if it did not.
func openHeld(t *testing.T) (db *postgres.DB, release func()) {
	t.Helper()
	db = openOn(t, testpg.Start(t).NewDatabase(t))
	let := make(chan struct{})
	held := make(chan error, 1)
	running := make(chan struct{})
	go func() {
		held <- db.Update(t.Context(), func(tx store.Tx) error {
			close(running)
			<-let
			return tx.PutSetting("held", "1")
		})
	}()
	<-running
	return db, func() {
		t.Helper()
		close(let)
		if err := <-held; err != nil {
			t.Fatal(err)
		}
	}
}

// An Update that goes on after one of its own statements failed (it
// took the error for something it may ignore) leaves the transaction
// aborted: it fails alone, and the Updates that share its batch are
// committed. Taken for a swallowed conflict, the batch runs again alone,
// where the error can only be the Update's own.
func TestUpdateThatSwallowsItsErrorFailsAlone(t *testing.T) {
	db, release := openHeld(t)
	keys := []string{"x", "y", "z"}
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.Update(t.Context(), func(tx store.Tx) error {
				if k == "x" {
					_ = tx.PutSetting(k, "nul\x00byte") // refused, and ignored
					return nil
				}
				return tx.PutSetting(k, "v")
			})
		}()
		for db.Waiting() < i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	release()
	wg.Wait()
	if errs[0] == nil || errs[1] != nil || errs[2] != nil {
		t.Fatalf("outcomes %v; want x's failure alone", errs)
	}
	err := db.View(t.Context(), func(tx store.Tx) error {
		for _, k := range []string{"y", "z"} {
			if _, err := tx.GetSetting(k); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
		if _, err := tx.GetSetting("x"); core.ErrorCode(err) != core.ENOTFOUND {
			return fmt.Errorf("x: %v, want not found", err)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}
