package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/accesstest"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

func testNow(t *testing.T, s store.Store, clock *stcheck.Clock) {
	want := stcheck.Now(clock.Now())
	check := func(what string, tx store.Tx, want time.Time) {
		t.Helper()
		got := tx.Now()
		if !got.Equal(want) || got.Location() != time.UTC || got.Nanosecond()%1000 != 0 {
			t.Errorf("%s: Tx.Now() = %v, want %v (UTC, whole microseconds)", what, got, want)
		}
	}
	stcheck.Update(t, s, func(tx store.Tx) error {
		check("Update", tx, want)
		// The time is taken once, when the transaction starts.
		clock.Advance(time.Hour)
		check("Update after the clock moved", tx, want)
		return nil
	})
	want = stcheck.Now(clock.Now())
	stcheck.View(t, s, func(tx store.Tx) error {
		check("View", tx, want)
		return nil
	})
	want = stcheck.Now(clock.Advance(1500 * time.Nanosecond))
	stcheck.Update(t, s, func(tx store.Tx) error {
		check("Update after the clock advanced", tx, want)
		return nil
	})
}

// writeAll writes one row of every kind through tx.
func writeAll(tx store.Tx, suffix string) error {
	if err := tx.InsertWorkspace(&core.Workspace{Name: "ws" + suffix, Location: "westeurope", CreatedOn: tx.Now()}); err != nil {
		return err
	}
	if err := tx.InsertCompute(fullCompute("ws"+suffix, "c"+suffix, tx.Now())); err != nil {
		return err
	}
	if err := tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: "ws" + suffix, ResourceType: core.ResourceCompute, ResourceName: "c" + suffix, Kind: core.EventCreated}); err != nil {
		return err
	}
	if err := tx.InsertToken(&identity.APIToken{ID: "tok" + suffix, PrincipalID: "user:x", Hash: identity.HashToken(suffix), CreatedOn: tx.Now()}); err != nil {
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
	if err := writeAccess(tx, suffix); err != nil {
		return err
	}
	return tx.PutSetting("key"+suffix, "value")
}

// writeAccess writes one access-control row of every kind through tx.
func writeAccess(tx store.Tx, suffix string) error {
	if err := tx.InsertUser(&identity.User{Name: "user" + suffix, CreatedOn: tx.Now(), OIDCIssuer: accesstest.Issuer, OIDCSubject: "sub" + suffix}); err != nil {
		return err
	}
	if err := tx.InsertIdentity(&identity.Identity{Name: "id" + suffix, ClientID: "client" + suffix, CreatedOn: tx.Now()}); err != nil {
		return err
	}
	if err := tx.InsertRole(&identity.RoleDefinition{Name: "role" + suffix, Actions: []string{"*/read"}, CreatedOn: tx.Now()}); err != nil {
		return err
	}
	if err := tx.InsertRoleAssignment(&identity.RoleAssignment{ID: "ra" + suffix, PrincipalID: "user:user" + suffix,
		Role: "role" + suffix, Workspace: "ws" + suffix, CreatedOn: tx.Now()}); err != nil {
		return err
	}
	if err := tx.AppendAudit(&identity.AuditRecord{Time: tx.Now(), PrincipalID: "user:user" + suffix, Action: identity.ActUsersWrite,
		Target: "users/user" + suffix, Outcome: identity.AuditSucceeded}); err != nil {
		return err
	}
	return tx.InsertSigningKey(&identity.SigningKey{ID: "kid" + suffix, PrivatePEM: accesstest.TestPEM, CreatedOn: tx.Now()})
}

// hasSigningKey reports whether a signing key of that ID is stored.
func hasSigningKey(tx store.Tx, id string) (*identity.SigningKey, error) {
	keys, err := tx.ListSigningKeys()
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if k.ID == id {
			return k, nil
		}
	}
	return nil, nil
}

// wantNothingOf fails the test if any row writeAll(suffix) writes exists.
func wantNothingOf(t *testing.T, s store.Store, suffix string) {
	t.Helper()
	stcheck.View(t, s, func(tx store.Tx) error {
		_, err := tx.GetWorkspace("ws" + suffix)
		stcheck.WantCode(t, "workspace", err, core.ENOTFOUND)
		_, err = tx.GetCompute("ws"+suffix, "c"+suffix)
		stcheck.WantCode(t, "compute", err, core.ENOTFOUND)
		_, err = tx.FindTokenByHash(identity.HashToken(suffix))
		stcheck.WantCode(t, "token", err, core.ENOTFOUND)
		_, err = tx.GetSetting("key" + suffix)
		stcheck.WantCode(t, "setting", err, core.ENOTFOUND)
		_, err = tx.GetNode("node" + suffix)
		stcheck.WantCode(t, "node", err, core.ENOTFOUND)
		_, err = tx.GetJob("ws"+suffix, "job"+suffix)
		stcheck.WantCode(t, "job", err, core.ENOTFOUND)
		_, err = tx.GetAttempt("att" + suffix)
		stcheck.WantCode(t, "attempt", err, core.ENOTFOUND)
		events, err := tx.ListEvents(core.EventFilter{Workspace: "ws" + suffix})
		if err != nil || len(events) != 0 {
			t.Errorf("events: %d, %v; want none", len(events), err)
		}
		_, err = tx.GetUser("user" + suffix)
		stcheck.WantCode(t, "user", err, core.ENOTFOUND)
		_, err = tx.FindUserByOIDC(accesstest.Issuer, "sub"+suffix)
		stcheck.WantCode(t, "user by sign-in account", err, core.ENOTFOUND)
		_, err = tx.GetIdentity("id" + suffix)
		stcheck.WantCode(t, "identity", err, core.ENOTFOUND)
		_, err = tx.FindIdentityByClientID("client" + suffix)
		stcheck.WantCode(t, "identity by client ID", err, core.ENOTFOUND)
		_, err = tx.GetRole("role" + suffix)
		stcheck.WantCode(t, "role", err, core.ENOTFOUND)
		if as, err := tx.ListRoleAssignments("user:user"+suffix, ""); err != nil || len(as) != 0 {
			t.Errorf("role assignments: %d, %v; want none", len(as), err)
		}
		if records, err := tx.ListAudit(identity.AuditFilter{PrincipalID: "user:user" + suffix}); err != nil || len(records) != 0 {
			t.Errorf("audit records: %d, %v; want none", len(records), err)
		}
		if k, err := hasSigningKey(tx, "kid"+suffix); err != nil || k != nil {
			t.Errorf("signing key: %v, %v; want none", k, err)
		}
		return nil
	})
}

// wantAllOf fails the test unless the rows writeAll(suffix) writes exist.
func wantAllOf(t *testing.T, s store.Store, suffix string) {
	t.Helper()
	stcheck.View(t, s, func(tx store.Tx) error {
		if _, err := tx.GetWorkspace("ws" + suffix); err != nil {
			t.Errorf("workspace: %v", err)
		}
		if _, err := tx.GetCompute("ws"+suffix, "c"+suffix); err != nil {
			t.Errorf("compute: %v", err)
		}
		if _, err := tx.FindTokenByHash(identity.HashToken(suffix)); err != nil {
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
		if events, err := tx.ListEvents(core.EventFilter{Workspace: "ws" + suffix}); err != nil || len(events) != 1 {
			t.Errorf("events: %d, %v; want 1", len(events), err)
		}
		if _, err := tx.GetUser("user" + suffix); err != nil {
			t.Errorf("user: %v", err)
		}
		if _, err := tx.GetIdentity("id" + suffix); err != nil {
			t.Errorf("identity: %v", err)
		}
		if _, err := tx.GetRole("role" + suffix); err != nil {
			t.Errorf("role: %v", err)
		}
		if as, err := tx.ListRoleAssignments("user:user"+suffix, ""); err != nil || len(as) != 1 {
			t.Errorf("role assignments: %d, %v; want 1", len(as), err)
		}
		if records, err := tx.ListAudit(identity.AuditFilter{PrincipalID: "user:user" + suffix}); err != nil || len(records) != 1 {
			t.Errorf("audit records: %d, %v; want 1", len(records), err)
		}
		if k, err := hasSigningKey(tx, "kid"+suffix); err != nil || k == nil {
			t.Errorf("signing key: %v, %v; want one", k, err)
		}
		return nil
	})
}

func testRollback(t *testing.T, s store.Store, clock *stcheck.Clock) {
	stcheck.Update(t, s, func(tx store.Tx) error { return writeAll(tx, "-kept") })

	errFail := errors.New("fail on purpose")
	err := s.Update(t.Context(), func(tx store.Tx) error {
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
		n.State = node.NodeUnusable
		if err := tx.UpdateNode(n); err != nil {
			return err
		}
		j, err := tx.GetJob("ws-kept", "job-kept")
		if err != nil {
			return err
		}
		j.Status = job.JobQueued
		if err := tx.UpdateJob(j); err != nil {
			return err
		}
		a, err := tx.GetAttempt("att-kept")
		if err != nil {
			return err
		}
		a.Status = job.AttemptLost
		if err := tx.UpdateAttempt(a); err != nil {
			return err
		}
		if err := changeAccess(tx, "-kept"); err != nil {
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
	stcheck.View(t, s, func(tx store.Tx) error {
		if v, err := tx.GetSetting("key-kept"); v != "value" {
			t.Errorf("rolled-back setting: %q, %v", v, err)
		}
		if n, err := tx.GetNode("node-kept"); err != nil || n.State != node.NodeRunning {
			t.Errorf("rolled-back node update is visible: %v, %v", n, err)
		}
		if j, err := tx.GetJob("ws-kept", "job-kept"); err != nil || j.Status != job.JobRunning {
			t.Errorf("rolled-back job update is visible: %v, %v", j, err)
		}
		if queued, err := tx.ListQueuedJobs(); err != nil || len(queued) != 0 {
			t.Errorf("rolled-back job update is queued: %d jobs, %v", len(queued), err)
		}
		if a, err := tx.GetAttempt("att-kept"); err != nil || a.Status != job.AttemptFailed {
			t.Errorf("rolled-back attempt update is visible: %v, %v", a, err)
		}
		return nil
	})
	wantAccessUnchanged(t, s, "-kept")

	// A *shoal.Error from fn comes back with its code.
	err = s.Update(t.Context(), func(tx store.Tx) error {
		if err := writeAll(tx, "-conflict"); err != nil {
			return err
		}
		return core.Errorf(core.EPRECONDITION, "stale")
	})
	stcheck.WantCode(t, "Update whose fn returns a shoal error", err, core.EPRECONDITION)
	wantNothingOf(t, s, "-conflict")

	// A store error that fn returns rolls back the writes before it.
	err = s.Update(t.Context(), func(tx store.Tx) error {
		if err := writeAll(tx, "-partial"); err != nil {
			return err
		}
		return tx.InsertWorkspace(&core.Workspace{Name: "WS-KEPT", CreatedOn: tx.Now()})
	})
	stcheck.WantCode(t, "Update whose fn returns a store conflict", err, core.ECONFLICT)
	wantNothingOf(t, s, "-partial")

	// The store still works.
	stcheck.Update(t, s, func(tx store.Tx) error { return writeAll(tx, "-after") })
	wantAllOf(t, s, "-after")
}

// changeAccess changes every access-control row writeAll(suffix) wrote.
func changeAccess(tx store.Tx, suffix string) error {
	u, err := tx.GetUser("user" + suffix)
	if err != nil {
		return err
	}
	u.Disabled, u.OIDCSubject = true, "changed"
	if err := tx.UpdateUser(u); err != nil {
		return err
	}
	tok, err := tx.GetToken("tok" + suffix)
	if err != nil {
		return err
	}
	tok.Revoked = true
	if err := tx.UpdateToken(tok); err != nil {
		return err
	}
	if err := tx.DeleteIdentity("id" + suffix); err != nil {
		return err
	}
	if err := tx.DeleteRoleAssignment("ra" + suffix); err != nil {
		return err
	}
	k, err := hasSigningKey(tx, "kid"+suffix)
	if err != nil {
		return err
	}
	if k == nil {
		return fmt.Errorf("signing key %q not found", "kid"+suffix)
	}
	retired := tx.Now()
	k.RetiredOn = &retired
	return tx.UpdateSigningKey(k)
}

// wantAccessUnchanged fails the test if a change of changeAccess(suffix)
// is visible.
func wantAccessUnchanged(t *testing.T, s store.Store, suffix string) {
	t.Helper()
	stcheck.View(t, s, func(tx store.Tx) error {
		if u, err := tx.GetUser("user" + suffix); err != nil || u.Disabled || u.OIDCSubject != "sub"+suffix {
			t.Errorf("user change is visible: %v, %v", u, err)
		}
		if tok, err := tx.GetToken("tok" + suffix); err != nil || tok.Revoked {
			t.Errorf("token change is visible: %v, %v", tok, err)
		}
		if _, err := tx.GetIdentity("id" + suffix); err != nil {
			t.Errorf("identity deletion is visible: %v", err)
		}
		if as, err := tx.ListRoleAssignments("user:user"+suffix, ""); err != nil || len(as) != 1 {
			t.Errorf("role assignment deletion is visible: %d, %v", len(as), err)
		}
		if k, err := hasSigningKey(tx, "kid"+suffix); err != nil || k == nil || k.RetiredOn != nil {
			t.Errorf("signing key change is visible: %v, %v", k, err)
		}
		return nil
	})
}

func testRollbackOnPanic(t *testing.T, s store.Store, clock *stcheck.Clock) {
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the panic of fn", r)
			}
		}()
		_ = s.Update(t.Context(), func(tx store.Tx) error {
			if err := writeAll(tx, "-panic"); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	wantNothingOf(t, s, "-panic")
	// The transaction was released: the store still takes writes.
	stcheck.Update(t, s, func(tx store.Tx) error { return writeAll(tx, "-after") })
	wantAllOf(t, s, "-after")
}

func testViewIsReadOnly(t *testing.T, s store.Store, clock *stcheck.Clock) {
	stcheck.Update(t, s, func(tx store.Tx) error { return writeAll(tx, "-x") })
	at := stcheck.Now(clock.Now())
	writes := map[string]func(tx store.Tx) error{
		"InsertWorkspace": func(tx store.Tx) error {
			return tx.InsertWorkspace(&core.Workspace{Name: "ws-view", CreatedOn: at})
		},
		"InsertCompute": func(tx store.Tx) error { return tx.InsertCompute(fullCompute("ws-view", "c-view", at)) },
		"UpdateCompute": func(tx store.Tx) error {
			c := fullCompute("ws-x", "c-x", at)
			c.Description = "changed in a view"
			return tx.UpdateCompute(c)
		},
		"DeleteCompute": func(tx store.Tx) error { return tx.DeleteCompute("ws-x", "c-x") },
		"AppendEvent": func(tx store.Tx) error {
			return tx.AppendEvent(&core.Event{Time: at, Workspace: "ws-view", ResourceType: core.ResourceCompute, ResourceName: "c-view", Kind: core.EventCreated})
		},
		"InsertToken": func(tx store.Tx) error {
			return tx.InsertToken(&identity.APIToken{ID: "tok-view", PrincipalID: "user:x", Hash: identity.HashToken("-view"), CreatedOn: at})
		},
		"PutSetting": func(tx store.Tx) error { return tx.PutSetting("key-view", "value") },
		"InsertNode": func(tx store.Tx) error { return tx.InsertNode(fullNode("ws-view", "c-view", "node-view", at)) },
		"UpdateNode": func(tx store.Tx) error {
			n := fullNode("ws-x", "c-x", "node-x", at)
			n.State = node.NodeUnusable
			return tx.UpdateNode(n)
		},
		"DeleteNode": func(tx store.Tx) error { return tx.DeleteNode("node-x") },
		"InsertJob":  func(tx store.Tx) error { return tx.InsertJob(fullJob("ws-view", "job-view", "c-view", 1, at)) },
		"UpdateJob": func(tx store.Tx) error {
			j := fullJob("ws-x", "job-x", "c-x", 1, at)
			j.Status = job.JobQueued
			return tx.UpdateJob(j)
		},
		"NextSeq": func(tx store.Tx) error {
			_, err := tx.NextSeq("job")
			return err
		},
		"InsertAttempt": func(tx store.Tx) error {
			return tx.InsertAttempt(fullAttempt("ws-view", "job-view", "att-view", 1, at))
		},
		"UpdateAttempt": func(tx store.Tx) error {
			a := fullAttempt("ws-x", "job-x", "att-x", 1, at)
			a.Status = job.AttemptLost
			return tx.UpdateAttempt(a)
		},
		"UpdateToken": func(tx store.Tx) error {
			return tx.UpdateToken(&identity.APIToken{ID: "tok-x", PrincipalID: "user:x", Hash: identity.HashToken("-x"), CreatedOn: at, Revoked: true})
		},
		"InsertUser": func(tx store.Tx) error { return tx.InsertUser(&identity.User{Name: "user-view", CreatedOn: at}) },
		"UpdateUser": func(tx store.Tx) error {
			return tx.UpdateUser(&identity.User{Name: "user-x", Disabled: true, CreatedOn: at, OIDCIssuer: accesstest.Issuer, OIDCSubject: "changed"})
		},
		"InsertIdentity": func(tx store.Tx) error {
			return tx.InsertIdentity(&identity.Identity{Name: "id-view", ClientID: "client-view", CreatedOn: at})
		},
		"DeleteIdentity": func(tx store.Tx) error { return tx.DeleteIdentity("id-x") },
		"InsertRole": func(tx store.Tx) error {
			return tx.InsertRole(&identity.RoleDefinition{Name: "role-view", Actions: []string{"*"}, CreatedOn: at})
		},
		"InsertRoleAssignment": func(tx store.Tx) error {
			return tx.InsertRoleAssignment(&identity.RoleAssignment{ID: "ra-view", PrincipalID: "user:user-view", Role: identity.RoleOwner, Workspace: "ws-view", CreatedOn: at})
		},
		"DeleteRoleAssignment": func(tx store.Tx) error { return tx.DeleteRoleAssignment("ra-x") },
		"AppendAudit": func(tx store.Tx) error {
			return tx.AppendAudit(&identity.AuditRecord{Time: at, PrincipalID: "user:user-view", Action: identity.ActUsersWrite, Outcome: identity.AuditDenied})
		},
		"InsertSigningKey": func(tx store.Tx) error {
			return tx.InsertSigningKey(&identity.SigningKey{ID: "kid-view", PrivatePEM: accesstest.TestPEM, CreatedOn: at})
		},
		"UpdateSigningKey": func(tx store.Tx) error {
			return tx.UpdateSigningKey(&identity.SigningKey{ID: "kid-x", PrivatePEM: accesstest.TestPEM, CreatedOn: at, RetiredOn: &at})
		},
	}
	for name, write := range writes {
		var inner error
		err := s.View(t.Context(), func(tx store.Tx) error {
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
	if n := getNode(t, s, "node-x"); n.State != node.NodeRunning {
		t.Errorf("UpdateNode in a View was committed")
	}
	if j := getJob(t, s, "ws-x", "job-x"); j.Status != job.JobRunning {
		t.Errorf("UpdateJob in a View was committed")
	}
	if a := getAttempt(t, s, "att-x"); a.Status != job.AttemptFailed {
		t.Errorf("UpdateAttempt in a View was committed")
	}
	wantAccessUnchanged(t, s, "-x")
	stcheck.Update(t, s, func(tx store.Tx) error {
		if v, err := tx.NextSeq("job"); err != nil || v != 1 {
			t.Errorf("NextSeq after NextSeq in a View = %d, %v; want 1", v, err)
		}
		return nil
	})
}

func testConcurrentUpdates(t *testing.T, s store.Store, clock *stcheck.Clock) {
	const writers, perWriter = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter*2)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				err := s.Update(t.Context(), func(tx store.Tx) error {
					return tx.AppendEvent(&core.Event{
						Time: tx.Now(), Workspace: "load", ResourceType: core.ResourceCompute,
						ResourceName: fmt.Sprintf("writer-%d", w), Kind: core.EventScaled, Reason: fmt.Sprint(i),
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
				err := s.View(t.Context(), func(tx store.Tx) error {
					_, err := tx.ListEvents(core.EventFilter{Workspace: "load", ResourceName: fmt.Sprintf("writer-%d", w)})
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

	var events []*core.Event
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		events, err = tx.ListEvents(core.EventFilter{Workspace: "load"})
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
