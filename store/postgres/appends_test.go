package postgres_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

// A batch writes its Updates' events and audit records before it commits
// (package appendlog): what a failing Update appended is gone with it,
// even after a read of the log wrote it; what the others appended is
// committed in the order the Updates ran, with its IDs set; and a read of
// the log in the batch sees what the batch appended before it.
func TestBatchWritesItsLogsBeforeItCommits(t *testing.T) {
	db, release := openHeld(t)

	const n = 12
	const (
		failing       = 3 // appends, then fails
		readsThenFail = 5 // appends, reads both logs (writing what waits), then fails
		reads         = 8 // appends and reads both logs
	)
	var (
		mu     sync.Mutex
		order  []int // the Updates in the order they ran
		wg     sync.WaitGroup
		errs   = make([]error, n)
		events = make([][]*core.Event, n)
		audit  = make([]*identity.AuditRecord, n)
		seen   = make([][]string, n) // the events' reasons a reading Update saw
	)
	for i := range n {
		events[i] = []*core.Event{
			{Workspace: "ws", ResourceType: core.ResourceJob, ResourceName: fmt.Sprint("job-", i), Kind: core.EventCreated, Actor: "alice", Reason: fmt.Sprint(i, "a")},
			{Workspace: "ws", ResourceType: core.ResourceJob, ResourceName: fmt.Sprint("job-", i), Kind: core.EventFailed, Actor: "alice", Reason: fmt.Sprint(i, "b")},
		}
		audit[i] = &identity.AuditRecord{PrincipalID: "alice", Action: "jobs/write", Target: fmt.Sprint("ws/jobs/job-", i), Workspace: "ws", Source: "test", Outcome: identity.AuditSucceeded}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.Update(t.Context(), func(tx store.Tx) error {
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				for _, e := range events[i] {
					e.Time = tx.Now()
					if err := tx.AppendEvent(e); err != nil {
						return err
					}
				}
				if err := tx.AppendAudit(audit[i]); err != nil {
					return err
				}
				if i == readsThenFail || i == reads {
					got, err := tx.ListEvents(core.EventFilter{Workspace: "ws"})
					if err != nil {
						return err
					}
					for _, e := range got {
						seen[i] = append(seen[i], e.Reason)
					}
					recs, err := tx.ListAudit(identity.AuditFilter{Target: fmt.Sprint("ws/jobs/job-", i)})
					if err != nil {
						return err
					}
					if len(recs) != 1 || recs[0].ID == 0 {
						return fmt.Errorf("update %d read its audit record as %v", i, recs)
					}
				}
				if i == failing || i == readsThenFail {
					return errors.New("refused")
				}
				return nil
			})
		}()
	}
	for db.Waiting() < n {
		time.Sleep(time.Millisecond)
	}
	release()
	wg.Wait()

	var want []string // the committed events' reasons, in the order run
	for _, i := range order {
		failed := i == failing || i == readsThenFail
		if failed != (errs[i] != nil) {
			t.Errorf("update %d: %v", i, errs[i])
		}
		for _, e := range events[i] {
			if failed && e.ID != 0 {
				t.Errorf("update %d failed, but its event %q has ID %d", i, e.Reason, e.ID)
			}
			if !failed {
				want = append(want, e.Reason)
				if e.ID == 0 {
					t.Errorf("update %d committed, but its event %q has no ID", i, e.Reason)
				}
			}
		}
		if !failed && audit[i].ID == 0 {
			t.Errorf("update %d committed, but its audit record has no ID", i)
		}
	}
	// A reading Update saw the events of those that ran before it and
	// did not fail, then its own.
	for _, r := range []int{readsThenFail, reads} {
		var before []string
		for _, i := range order {
			if i == r {
				before = append(before, events[i][0].Reason, events[i][1].Reason)
				break
			}
			if i != failing && i != readsThenFail {
				before = append(before, events[i][0].Reason, events[i][1].Reason)
			}
		}
		if !slices.Equal(seen[r], before) {
			t.Errorf("update %d read the events %v; want %v", r, seen[r], before)
		}
	}
	err := db.View(t.Context(), func(tx store.Tx) error {
		got, err := tx.ListEvents(core.EventFilter{Workspace: "ws"})
		if err != nil {
			return err
		}
		var reasons []string
		for i, e := range got {
			reasons = append(reasons, e.Reason)
			if i > 0 && e.ID <= got[i-1].ID {
				t.Errorf("event IDs %d then %d: want ascending", got[i-1].ID, e.ID)
			}
		}
		if !slices.Equal(reasons, want) {
			t.Errorf("committed events %v; want %v (the Updates that did not fail, in the order they ran)", reasons, want)
		}
		recs, err := tx.ListAudit(identity.AuditFilter{})
		if err != nil {
			return err
		}
		if len(recs) != n-2 {
			t.Errorf("%d audit records committed; want %d", len(recs), n-2)
		}
		for _, r := range recs {
			if r.Target == fmt.Sprint("ws/jobs/job-", failing) || r.Target == fmt.Sprint("ws/jobs/job-", readsThenFail) {
				t.Errorf("a failed update's audit record was committed: %+v", r)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
