package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal"
)

func testNow(t *testing.T, s shoal.Store, clock *Clock) {
	want := now(clock.Now())
	check := func(what string, tx shoal.Tx, want time.Time) {
		t.Helper()
		got := tx.Now()
		if !got.Equal(want) || got.Location() != time.UTC || got.Nanosecond()%1000 != 0 {
			t.Errorf("%s: Tx.Now() = %v, want %v (UTC, whole microseconds)", what, got, want)
		}
	}
	update(t, s, func(tx shoal.Tx) error {
		check("Update", tx, want)
		// The time is taken once, when the transaction starts.
		clock.Advance(time.Hour)
		check("Update after the clock moved", tx, want)
		return nil
	})
	want = now(clock.Now())
	view(t, s, func(tx shoal.Tx) error {
		check("View", tx, want)
		return nil
	})
	want = now(clock.Advance(1500 * time.Nanosecond))
	update(t, s, func(tx shoal.Tx) error {
		check("Update after the clock advanced", tx, want)
		return nil
	})
}

// writeAll writes one row of every kind through tx.
func writeAll(tx shoal.Tx, suffix string) error {
	if err := tx.InsertWorkspace(&shoal.Workspace{Name: "ws" + suffix, Location: "westeurope", CreatedOn: tx.Now()}); err != nil {
		return err
	}
	if err := tx.InsertCompute(fullCompute("ws"+suffix, "c"+suffix, tx.Now())); err != nil {
		return err
	}
	if err := tx.AppendEvent(&shoal.Event{Time: tx.Now(), Workspace: "ws" + suffix, ResourceType: shoal.ResourceCompute, ResourceName: "c" + suffix, Kind: shoal.EventCreated}); err != nil {
		return err
	}
	if err := tx.InsertToken(&shoal.APIToken{ID: "tok" + suffix, PrincipalID: "user:x", Hash: shoal.HashToken(suffix), CreatedOn: tx.Now()}); err != nil {
		return err
	}
	if err := tx.InsertNode(fullNode("ws"+suffix, "c"+suffix, "node"+suffix, tx.Now())); err != nil {
		return err
	}
	if err := tx.InsertJob(fullJob("ws"+suffix, "job"+suffix, "c"+suffix, 1, tx.Now())); err != nil {
		return err
	}
	if err := tx.InsertAttempt(fullAttempt("ws"+suffix, "job"+suffix, "att"+suffix, 1, tx.Now())); err != nil {
		return err
	}
	return tx.PutSetting("key"+suffix, "value")
}

// wantNothingOf fails the test if any row writeAll(suffix) writes exists.
func wantNothingOf(t *testing.T, s shoal.Store, suffix string) {
	t.Helper()
	view(t, s, func(tx shoal.Tx) error {
		_, err := tx.GetWorkspace("ws" + suffix)
		wantCode(t, "workspace", err, shoal.ENOTFOUND)
		_, err = tx.GetCompute("ws"+suffix, "c"+suffix)
		wantCode(t, "compute", err, shoal.ENOTFOUND)
		_, err = tx.FindTokenByHash(shoal.HashToken(suffix))
		wantCode(t, "token", err, shoal.ENOTFOUND)
		_, err = tx.GetSetting("key" + suffix)
		wantCode(t, "setting", err, shoal.ENOTFOUND)
		_, err = tx.GetNode("node" + suffix)
		wantCode(t, "node", err, shoal.ENOTFOUND)
		_, err = tx.GetJob("ws"+suffix, "job"+suffix)
		wantCode(t, "job", err, shoal.ENOTFOUND)
		_, err = tx.GetAttempt("att" + suffix)
		wantCode(t, "attempt", err, shoal.ENOTFOUND)
		events, err := tx.ListEvents(shoal.EventFilter{Workspace: "ws" + suffix})
		if err != nil || len(events) != 0 {
			t.Errorf("events: %d, %v; want none", len(events), err)
		}
		return nil
	})
}

// wantAllOf fails the test unless the rows writeAll(suffix) writes exist.
func wantAllOf(t *testing.T, s shoal.Store, suffix string) {
	t.Helper()
	view(t, s, func(tx shoal.Tx) error {
		if _, err := tx.GetWorkspace("ws" + suffix); err != nil {
			t.Errorf("workspace: %v", err)
		}
		if _, err := tx.GetCompute("ws"+suffix, "c"+suffix); err != nil {
			t.Errorf("compute: %v", err)
		}
		if _, err := tx.FindTokenByHash(shoal.HashToken(suffix)); err != nil {
			t.Errorf("token: %v", err)
		}
		if _, err := tx.GetSetting("key" + suffix); err != nil {
			t.Errorf("setting: %v", err)
		}
		if _, err := tx.GetNode("node" + suffix); err != nil {
			t.Errorf("node: %v", err)
		}
		if _, err := tx.GetJob("ws"+suffix, "job"+suffix); err != nil {
			t.Errorf("job: %v", err)
		}
		if _, err := tx.GetAttempt("att" + suffix); err != nil {
			t.Errorf("attempt: %v", err)
		}
		if events, err := tx.ListEvents(shoal.EventFilter{Workspace: "ws" + suffix}); err != nil || len(events) != 1 {
			t.Errorf("events: %d, %v; want 1", len(events), err)
		}
		return nil
	})
}

func testRollback(t *testing.T, s shoal.Store, clock *Clock) {
	update(t, s, func(tx shoal.Tx) error { return writeAll(tx, "-kept") })

	errFail := errors.New("fail on purpose")
	err := s.Update(t.Context(), func(tx shoal.Tx) error {
		if err := writeAll(tx, "-lost"); err != nil {
			return err
		}
		// Changes to existing rows are rolled back too.
		c, err := tx.GetCompute("ws-kept", "c-kept")
		if err != nil {
			return err
		}
		c.Description = "lost"
		c.Version++
		if err := tx.UpdateCompute(c); err != nil {
			return err
		}
		if err := tx.PutSetting("key-kept", "lost"); err != nil {
			return err
		}
		if err := tx.DeleteCompute("ws-kept", "c-kept"); err != nil {
			return err
		}
		n, err := tx.GetNode("node-kept")
		if err != nil {
			return err
		}
		n.State = shoal.NodeUnusable
		if err := tx.UpdateNode(n); err != nil {
			return err
		}
		j, err := tx.GetJob("ws-kept", "job-kept")
		if err != nil {
			return err
		}
		j.Status = shoal.JobQueued
		if err := tx.UpdateJob(j); err != nil {
			return err
		}
		a, err := tx.GetAttempt("att-kept")
		if err != nil {
			return err
		}
		a.Status = shoal.AttemptLost
		if err := tx.UpdateAttempt(a); err != nil {
			return err
		}
		return errFail
	})
	if !errors.Is(err, errFail) {
		t.Fatalf("Update returned %v, want fn's error", err)
	}
	wantNothingOf(t, s, "-lost")
	wantAllOf(t, s, "-kept")
	c := getCompute(t, s, "ws-kept", "c-kept")
	if c.Description == "lost" || c.Version != 1 {
		t.Errorf("rolled-back update is visible: description %q, version %d", c.Description, c.Version)
	}
	view(t, s, func(tx shoal.Tx) error {
		if v, err := tx.GetSetting("key-kept"); v != "value" {
			t.Errorf("rolled-back setting: %q, %v", v, err)
		}
		if n, err := tx.GetNode("node-kept"); err != nil || n.State != shoal.NodeRunning {
			t.Errorf("rolled-back node update is visible: %v, %v", n, err)
		}
		if j, err := tx.GetJob("ws-kept", "job-kept"); err != nil || j.Status != shoal.JobRunning {
			t.Errorf("rolled-back job update is visible: %v, %v", j, err)
		}
		if queued, err := tx.ListQueuedJobs(); err != nil || len(queued) != 0 {
			t.Errorf("rolled-back job update is queued: %d jobs, %v", len(queued), err)
		}
		if a, err := tx.GetAttempt("att-kept"); err != nil || a.Status != shoal.AttemptFailed {
			t.Errorf("rolled-back attempt update is visible: %v, %v", a, err)
		}
		return nil
	})

	// A *shoal.Error from fn comes back with its code.
	err = s.Update(t.Context(), func(tx shoal.Tx) error {
		if err := writeAll(tx, "-conflict"); err != nil {
			return err
		}
		return shoal.Errorf(shoal.EPRECONDITION, "stale")
	})
	wantCode(t, "Update whose fn returns a shoal error", err, shoal.EPRECONDITION)
	wantNothingOf(t, s, "-conflict")

	// A store error that fn returns rolls back the writes before it.
	err = s.Update(t.Context(), func(tx shoal.Tx) error {
		if err := writeAll(tx, "-partial"); err != nil {
			return err
		}
		return tx.InsertWorkspace(&shoal.Workspace{Name: "WS-KEPT", CreatedOn: tx.Now()})
	})
	wantCode(t, "Update whose fn returns a store conflict", err, shoal.ECONFLICT)
	wantNothingOf(t, s, "-partial")

	// The store still works.
	update(t, s, func(tx shoal.Tx) error { return writeAll(tx, "-after") })
	wantAllOf(t, s, "-after")
}

func testRollbackOnPanic(t *testing.T, s shoal.Store, clock *Clock) {
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the panic of fn", r)
			}
		}()
		_ = s.Update(t.Context(), func(tx shoal.Tx) error {
			if err := writeAll(tx, "-panic"); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	wantNothingOf(t, s, "-panic")
	// The transaction was released: the store still takes writes.
	update(t, s, func(tx shoal.Tx) error { return writeAll(tx, "-after") })
	wantAllOf(t, s, "-after")
}

func testViewIsReadOnly(t *testing.T, s shoal.Store, clock *Clock) {
	update(t, s, func(tx shoal.Tx) error { return writeAll(tx, "-x") })
	at := now(clock.Now())
	writes := map[string]func(tx shoal.Tx) error{
		"InsertWorkspace": func(tx shoal.Tx) error {
			return tx.InsertWorkspace(&shoal.Workspace{Name: "ws-view", CreatedOn: at})
		},
		"InsertCompute": func(tx shoal.Tx) error { return tx.InsertCompute(fullCompute("ws-view", "c-view", at)) },
		"UpdateCompute": func(tx shoal.Tx) error {
			c := fullCompute("ws-x", "c-x", at)
			c.Description = "changed in a view"
			return tx.UpdateCompute(c)
		},
		"DeleteCompute": func(tx shoal.Tx) error { return tx.DeleteCompute("ws-x", "c-x") },
		"AppendEvent": func(tx shoal.Tx) error {
			return tx.AppendEvent(&shoal.Event{Time: at, Workspace: "ws-view", ResourceType: shoal.ResourceCompute, ResourceName: "c-view", Kind: shoal.EventCreated})
		},
		"InsertToken": func(tx shoal.Tx) error {
			return tx.InsertToken(&shoal.APIToken{ID: "tok-view", PrincipalID: "user:x", Hash: shoal.HashToken("-view"), CreatedOn: at})
		},
		"PutSetting": func(tx shoal.Tx) error { return tx.PutSetting("key-view", "value") },
		"InsertNode": func(tx shoal.Tx) error { return tx.InsertNode(fullNode("ws-view", "c-view", "node-view", at)) },
		"UpdateNode": func(tx shoal.Tx) error {
			n := fullNode("ws-x", "c-x", "node-x", at)
			n.State = shoal.NodeUnusable
			return tx.UpdateNode(n)
		},
		"DeleteNode": func(tx shoal.Tx) error { return tx.DeleteNode("node-x") },
		"InsertJob":  func(tx shoal.Tx) error { return tx.InsertJob(fullJob("ws-view", "job-view", "c-view", 1, at)) },
		"UpdateJob": func(tx shoal.Tx) error {
			j := fullJob("ws-x", "job-x", "c-x", 1, at)
			j.Status = shoal.JobQueued
			return tx.UpdateJob(j)
		},
		"NextSeq": func(tx shoal.Tx) error {
			_, err := tx.NextSeq("job")
			return err
		},
		"InsertAttempt": func(tx shoal.Tx) error {
			return tx.InsertAttempt(fullAttempt("ws-view", "job-view", "att-view", 1, at))
		},
		"UpdateAttempt": func(tx shoal.Tx) error {
			a := fullAttempt("ws-x", "job-x", "att-x", 1, at)
			a.Status = shoal.AttemptLost
			return tx.UpdateAttempt(a)
		},
	}
	for name, write := range writes {
		var inner error
		err := s.View(t.Context(), func(tx shoal.Tx) error {
			inner = write(tx)
			return nil // ignore the error: the store must not commit anyway
		})
		if inner == nil {
			t.Errorf("%s in a View succeeded", name)
		}
		if err != nil {
			t.Logf("%s: View returned %v", name, err)
		}
	}
	wantNothingOf(t, s, "-view")
	wantAllOf(t, s, "-x")
	if c := getCompute(t, s, "ws-x", "c-x"); c.Description == "changed in a view" {
		t.Errorf("UpdateCompute in a View was committed")
	}
	if n := getNode(t, s, "node-x"); n.State != shoal.NodeRunning {
		t.Errorf("UpdateNode in a View was committed")
	}
	if j := getJob(t, s, "ws-x", "job-x"); j.Status != shoal.JobRunning {
		t.Errorf("UpdateJob in a View was committed")
	}
	if a := getAttempt(t, s, "att-x"); a.Status != shoal.AttemptFailed {
		t.Errorf("UpdateAttempt in a View was committed")
	}
	update(t, s, func(tx shoal.Tx) error {
		if v, err := tx.NextSeq("job"); err != nil || v != 1 {
			t.Errorf("NextSeq after NextSeq in a View = %d, %v; want 1", v, err)
		}
		return nil
	})
}

func testConcurrentUpdates(t *testing.T, s shoal.Store, clock *Clock) {
	const writers, perWriter = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter*2)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				err := s.Update(t.Context(), func(tx shoal.Tx) error {
					return tx.AppendEvent(&shoal.Event{
						Time: tx.Now(), Workspace: "load", ResourceType: shoal.ResourceCompute,
						ResourceName: fmt.Sprintf("writer-%d", w), Kind: shoal.EventScaled, Reason: fmt.Sprint(i),
					})
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d, event %d: %w", w, i, err)
				}
			}
		})
		// Readers run alongside the writers.
		wg.Go(func() {
			for range perWriter {
				err := s.View(t.Context(), func(tx shoal.Tx) error {
					_, err := tx.ListEvents(shoal.EventFilter{Workspace: "load", ResourceName: fmt.Sprintf("writer-%d", w)})
					return err
				})
				if err != nil {
					errs <- fmt.Errorf("reader %d: %w", w, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	var events []*shoal.Event
	view(t, s, func(tx shoal.Tx) (err error) {
		events, err = tx.ListEvents(shoal.EventFilter{Workspace: "load"})
		return err
	})
	if len(events) != writers*perWriter {
		t.Fatalf("%d events, want %d", len(events), writers*perWriter)
	}
	perName := map[string][]string{}
	for i, e := range events {
		if i > 0 && e.ID <= events[i-1].ID {
			t.Errorf("event IDs not increasing: %d after %d", e.ID, events[i-1].ID)
		}
		perName[e.ResourceName] = append(perName[e.ResourceName], e.Reason)
	}
	for w := range writers {
		reasons := perName[fmt.Sprintf("writer-%d", w)]
		if len(reasons) != perWriter {
			t.Errorf("writer %d: %d events, want %d", w, len(reasons), perWriter)
			continue
		}
		// Each writer's events are in the order it wrote them.
		for i, r := range reasons {
			if r != fmt.Sprint(i) {
				t.Errorf("writer %d: event %d has reason %q", w, i, r)
				break
			}
		}
	}
}
