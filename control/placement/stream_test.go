package placement_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/placement"
	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
)

// readCounter is a store whose transactions note the most queued jobs
// one read of the queue returned.
type readCounter struct {
	store.Store
	mu  sync.Mutex
	max int
}

func (s *readCounter) note(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.max = max(s.max, n)
}

func (s *readCounter) View(ctx context.Context, fn func(tx store.Tx) error) error {
	return s.Store.View(ctx, func(tx store.Tx) error { return fn(countingTx{tx, s}) })
}

func (s *readCounter) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(countingTx{tx, s}) })
}

// countingTx counts what every read of queued jobs returns.
type countingTx struct {
	store.Tx
	s *readCounter
}

func (t countingTx) ListQueuedJobs() ([]*job.Job, error) {
	out, err := t.Tx.ListQueuedJobs()
	t.s.note(len(out))
	return out, err
}

func (t countingTx) ListQueuedJobsCreated(after, upTo time.Time, limit int) ([]store.QueuedJobRef, error) {
	out, err := t.Tx.ListQueuedJobsCreated(after, upTo, limit)
	t.s.note(len(out))
	return out, err
}

func (t countingTx) ListQueueHeads(headLen func(key string) int) ([]store.QueuedJobRef, map[string]int, error) {
	out, demand, err := t.Tx.ListQueueHeads(headLen)
	t.s.note(len(out))
	return out, demand, err
}

func (t countingTx) ListQueueHead(workspace, compute string, n int) ([]store.QueuedJobRef, error) {
	out, err := t.Tx.ListQueueHead(workspace, compute, n)
	t.s.note(len(out))
	return out, err
}

// PageComputeQueue counts each page it hands over.
func (t countingTx) PageComputeQueue(workspace, compute string, size int, fn func([]store.QueuedJobRef) error) error {
	return t.Tx.PageComputeQueue(workspace, compute, size, func(page []store.QueuedJobRef) error {
		t.s.note(len(page))
		return fn(page)
	})
}

// A pass over the whole queue holds one compute's queue at a time: of
// three computes with 3, 4 and 5 queued jobs and one idle node each, no
// read of the queue returns more than 5 jobs (one read of the whole
// queue returned all 12), and the pass decides what it decided reading
// them at once: each compute's first job starts, every other job waits
// behind the second, and the autoscaler is handed each compute's demand.
func TestWholeQueuePassHoldsOneComputesQueue(t *testing.T) {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	sizes := map[string]int{"cpa": 3, "cpb": 4, "cpc": 5}
	seedClusters(t, db, 1, "cpa", "cpb", "cpc")
	counter := &readCounter{Store: db}
	svc := newServices(t, counter)
	admin := asAdmin(ctx)
	// Submitted in turns, so that the whole queue interleaves the computes.
	for i := range 5 {
		for _, c := range []string{"cpa", "cpb", "cpc"} {
			if i >= sizes[c] {
				continue
			}
			spec := &job.JobSpec{Name: fmt.Sprintf("%s-%d", c, i), Type: job.JobTypeCommand, Command: "true", Compute: "azureml:" + c}
			if _, _, err := svc.SubmitJob(admin, "ws", spec); err != nil {
				t.Fatal(err)
			}
			clock.Advance(1)
		}
	}
	counter.mu.Lock()
	counter.max = 0 // the submissions' own reads are not the pass's
	counter.mu.Unlock()

	pass := placement.New(svc, noBlocks{}, scheduling.NewView())
	p, err := pass.Plan(ctx, clock.Now(), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Queued() != 12 {
		t.Errorf("the pass read %d queued jobs, want 12", p.Queued())
	}
	st, err := pass.Apply(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if counter.max > 5 {
		t.Errorf("one read of the queue returned %d jobs: the pass held more than one compute's queue (the largest has 5)", counter.max)
	}
	for c, n := range sizes {
		if got := st.Demand["ws/"+c]; got != n-1 {
			t.Errorf("demand of %s after the pass: %d, want %d (its queue less the job placed)", c, got, n-1)
		}
	}
	err = db.View(ctx, func(tx store.Tx) error {
		for c, n := range sizes {
			first, err := tx.GetJob("ws", c+"-0")
			if err != nil {
				return err
			}
			if first.Status == job.JobQueued {
				t.Errorf("%s's first job is still queued beside an idle node", c)
			}
			for i := 1; i < n; i++ {
				name := fmt.Sprintf("%s-%d", c, i)
				r, ok, err := svc.WaitReasons().Get(tx, "ws", name)
				if err != nil {
					return err
				}
				want := scheduler.ReasonBehind
				if i == 1 {
					want = scheduler.ReasonAtMax // the head of what is left
				}
				if !ok || r.Code() != want {
					t.Errorf("%s waits with %+v (%v), want %s", name, r, ok, want)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
