package postgres_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlstore/txobserve"
)

// seedWork inserts n jobs with an attempt each and n nodes: job-i,
// att-i, node-i.
func seedWork(t *testing.T, db store.Store, n int) {
	t.Helper()
	at := time.Now().UTC().Truncate(time.Microsecond)
	err := db.Update(t.Context(), func(tx store.Tx) error {
		for i := range n {
			j := &job.Job{JobSpec: job.JobSpec{Name: fmt.Sprint("job-", i), Type: "command", Command: "true", Compute: "cpu"},
				Workspace: "ws", Status: job.JobQueued, Seq: int64(i + 1), CreatedOn: at}
			if err := tx.InsertJob(j); err != nil {
				return err
			}
			if err := tx.InsertAttempt(&job.Attempt{ID: fmt.Sprint("att-", i), Workspace: "ws", JobName: j.Name, Number: 1,
				Status: job.AttemptPreparing, CreatedOn: at}); err != nil {
				return err
			}
			if err := tx.InsertNode(&node.Node{ID: fmt.Sprint("node-", i), Workspace: "ws", Compute: "cpu", Location: "local",
				State: node.NodeIdle, CreatedOn: at, LastHeartbeat: at}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// startOn writes what a hand-on writes for job-i: its node running it,
// its attempt and the job, each read first; together or one by one.
func startOn(tx store.Tx, i int, together bool) error {
	n, err := tx.GetNode(fmt.Sprint("node-", i))
	if err != nil {
		return err
	}
	a, j, err := tx.GetAttemptWithJob(fmt.Sprint("att-", i))
	if err != nil {
		return err
	}
	n.State, n.CurrentAttemptID, n.CurrentJobName, n.Version = node.NodeRunning, a.ID, j.Name, n.Version+1
	a.Status = job.AttemptRunning
	j.Status, j.Version = job.JobRunning, j.Version+1
	writes := func(tx store.Tx) error {
		if err := tx.UpdateNode(n); err != nil {
			return err
		}
		if err := tx.UpdateAttempt(a); err != nil {
			return err
		}
		return tx.UpdateJob(j)
	}
	if together {
		return tx.Together(writes)
	}
	return writes(tx)
}

// A Together's writes are one statement on PostgreSQL: a node, an attempt
// and a job written after their reads take the reads' two statements,
// the view generation's raise and one more, where one by one they take
// three (each a round trip under the store's write lock).
func TestTogetherWritesInOneStatement(t *testing.T) {
	db := openOn(t, testpg.Start(t).NewDatabase(t))
	seedWork(t, db, 2)
	count := func(i int, together bool) int64 {
		var n atomic.Int64
		if err := db.Update(txobserve.CountStatements(t.Context(), &n), func(tx store.Tx) error {
			return startOn(tx, i, together)
		}); err != nil {
			t.Fatal(err)
		}
		return n.Load()
	}
	alone, together := count(0, false), count(1, true)
	if alone != 6 || together != 4 {
		t.Errorf("statements: one by one %d, together %d; want 6 and 4 (2 reads, the generation, then 3 writes or 1)", alone, together)
	}
	err := db.View(t.Context(), func(tx store.Tx) error {
		for i := range 2 {
			a, j, err := tx.GetAttemptWithJob(fmt.Sprint("att-", i))
			if err != nil {
				return err
			}
			n, err := tx.GetNode(fmt.Sprint("node-", i))
			if err != nil {
				return err
			}
			if a.Status != job.AttemptRunning || j.Status != job.JobRunning || n.State != node.NodeRunning || n.CurrentAttemptID != a.ID {
				t.Errorf("job-%d after its writes: attempt %s, job %s, node %s on %q", i, a.Status, j.Status, n.State, n.CurrentAttemptID)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// In a batch, an Update whose Together fails (its node is gone) is rolled
// back to its savepoint alone: the Updates beside it, whose Togethers
// were sent as one statement each, commit.
func TestTogetherFailingInABatchFailsAlone(t *testing.T) {
	const n = 5
	const failing = 2
	db := openOn(t, testpg.Start(t).NewDatabase(t))
	seedWork(t, db, n)
	release := holdWrites(t, db)
	errs := make([]error, n)
	var wg sync.WaitGroup
	ready := make(chan struct{}, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ready <- struct{}{}
			errs[i] = db.Update(t.Context(), func(tx store.Tx) error {
				return tx.Together(func(tx store.Tx) error {
					at := tx.Now()
					name := fmt.Sprint("job-", i)
					if err := tx.InsertAttempt(&job.Attempt{ID: fmt.Sprint("att-", i, "-2"), Workspace: "ws", JobName: name, Number: 2,
						Status: job.AttemptPreparing, CreatedOn: at}); err != nil {
						return err
					}
					id := fmt.Sprint("node-", i)
					if i == failing {
						id = "node-gone"
					}
					return tx.UpdateNode(&node.Node{ID: id, Workspace: "ws", Compute: "cpu", Location: "local", State: node.NodeRunning, CreatedOn: at})
				})
			})
		}()
	}
	for range n {
		<-ready
	}
	waitQueued(t, db, n)
	release()
	wg.Wait()
	for i, err := range errs {
		if i == failing {
			if core.ErrorCode(err) != core.ENOTFOUND {
				t.Errorf("Update %d (its node gone): %v, want ENOTFOUND", i, err)
			}
		} else if err != nil {
			t.Errorf("Update %d: %v", i, err)
		}
	}
	err := db.View(t.Context(), func(tx store.Tx) error {
		for i := range n {
			_, err := tx.GetAttempt(fmt.Sprint("att-", i, "-2"))
			if i == failing {
				if core.ErrorCode(err) != core.ENOTFOUND {
					t.Errorf("att-%d-2 of the failed Update: %v, want it rolled back", i, err)
				}
			} else if err != nil {
				t.Errorf("att-%d-2: %v", i, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
