package accesstest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

func testRoles(t *testing.T, s store.Store, clock *stcheck.Clock) {
	raw := clock.Now() // nanoseconds, CET
	later := clock.Advance(time.Minute)
	operator := &identity.RoleDefinition{
		Name: "Compute-Operator", Description: "starts and stops computes ✓",
		Actions:    []string{identity.ActComputesRead, "computes/*"},
		NotActions: []string{identity.ActComputesDelete, identity.ActComputesWrite},
		CreatedOn:  raw,
	}
	// nil and empty lists read back as written.
	auditor := &identity.RoleDefinition{Name: "auditor", Actions: []string{"*/read"}, CreatedOn: later}
	empty := &identity.RoleDefinition{Name: "Blank", Actions: []string{}, NotActions: []string{}, CreatedOn: later}
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, r := range []*identity.RoleDefinition{operator, auditor, empty} {
			if err := tx.InsertRole(r); err != nil {
				return err
			}
		}
		return nil
	})
	if operator.CreatedOn != stcheck.Now(raw) {
		t.Errorf("InsertRole left CreatedOn %v, want its stored form %v", operator.CreatedOn, stcheck.Now(raw))
	}
	get := func(name string) *identity.RoleDefinition {
		t.Helper()
		var r *identity.RoleDefinition
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			r, err = tx.GetRole(name)
			return err
		})
		return r
	}
	for _, name := range []string{"Compute-Operator", "compute-operator", "COMPUTE-OPERATOR"} {
		stcheck.Equal(t, "GetRole("+name+")", get(name), operator)
	}
	stcheck.Equal(t, "GetRole(auditor)", get("Auditor"), auditor)
	stcheck.Equal(t, "GetRole(blank)", get("blank"), empty)

	stcheck.View(t, s, func(tx store.Tx) error {
		_, err := tx.GetRole("nope")
		stcheck.WantCode(t, "GetRole of a missing role", err, core.ENOTFOUND)
		// Built-in roles are not stored.
		_, err = tx.GetRole(identity.RoleOwner)
		stcheck.WantCode(t, "GetRole of a built-in role", err, core.ENOTFOUND)
		return nil
	})

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertRole(&identity.RoleDefinition{Name: "AUDITOR", Actions: []string{"jobs/read"}, CreatedOn: tx.Now()})
	})
	stcheck.WantCode(t, "InsertRole of an existing name", err, core.ECONFLICT)
	stcheck.Equal(t, "role after a conflicting InsertRole", get("auditor"), auditor)

	var roles []*identity.RoleDefinition
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		roles, err = tx.ListRoles()
		return err
	})
	stcheck.Equal(t, "ListRoles", roles, []*identity.RoleDefinition{auditor, empty, operator})
}

func testRoleAssignments(t *testing.T, s store.Store, clock *stcheck.Clock) {
	raw := clock.Now() // nanoseconds, CET
	t2 := stcheck.Now(clock.Advance(time.Minute))
	t3 := stcheck.Now(clock.Advance(time.Minute))
	// Listed by creation time, then ID: not by ID alone.
	as := []*identity.RoleAssignment{
		{ID: "ra-9", PrincipalID: "user:alice", Role: identity.RoleReader, Workspace: "Prod", CreatedOn: raw, CreatedBy: "admin"},
		{ID: "ra-5", PrincipalID: "user:alice", Role: "Compute-Operator", Workspace: "staging", CreatedOn: t2, CreatedBy: "user:bob"},
		{ID: "ra-7", PrincipalID: "identity:trainer", Role: identity.RoleContributor, Workspace: "prod", CreatedOn: t2, CreatedBy: "user:alice"},
		{ID: "ra-1", PrincipalID: "user:bob", Role: identity.RoleOwner, Workspace: "PROD", CreatedOn: t3},
		// The same role of the same principal in another workspace.
		{ID: "ra-2", PrincipalID: "user:alice", Role: identity.RoleReader, Workspace: "staging", CreatedOn: t3},
	}
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, a := range as {
			if err := tx.InsertRoleAssignment(a); err != nil {
				return err
			}
		}
		return nil
	})
	if as[0].CreatedOn != stcheck.Now(raw) {
		t.Errorf("InsertRoleAssignment left CreatedOn %v, want its stored form %v", as[0].CreatedOn, stcheck.Now(raw))
	}
	list := func(principal, workspace string, want ...*identity.RoleAssignment) {
		t.Helper()
		var got []*identity.RoleAssignment
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.ListRoleAssignments(principal, workspace)
			return err
		})
		if len(got) == 0 && len(want) == 0 {
			return
		}
		stcheck.Equal(t, "ListRoleAssignments("+principal+", "+workspace+")", got, want)
	}
	list("", "", as...)
	list("user:alice", "", as[0], as[1], as[4])
	list("", "prod", as[0], as[2], as[3])
	list("", "PrOd", as[0], as[2], as[3])
	list("user:alice", "STAGING", as[1], as[4])
	list("user:bob", "staging")
	list("user:nobody", "")
	list("", "nowhere")

	for _, c := range []*identity.RoleAssignment{
		// The same grant, with role and workspace in another case.
		{ID: "ra-new", PrincipalID: "user:alice", Role: "READER", Workspace: "pRoD", CreatedOn: t3},
		// The same ID.
		{ID: "ra-1", PrincipalID: "user:carol", Role: identity.RoleReader, Workspace: "prod", CreatedOn: t3},
	} {
		err := s.Update(t.Context(), func(tx store.Tx) error { return tx.InsertRoleAssignment(c) })
		stcheck.WantCode(t, "InsertRoleAssignment "+c.ID+" of "+c.PrincipalID, err, core.ECONFLICT)
	}
	list("", "", as...)

	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteRoleAssignment("ra-9") })
	list("user:alice", "", as[1], as[4])
	err := s.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteRoleAssignment("ra-9") })
	stcheck.WantCode(t, "DeleteRoleAssignment of a deleted assignment", err, core.ENOTFOUND)
	err = s.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteRoleAssignment("RA-1") })
	stcheck.WantCode(t, "DeleteRoleAssignment compares IDs exactly", err, core.ENOTFOUND)

	// The grant can be made again once deleted.
	again := &identity.RoleAssignment{ID: "ra-10", PrincipalID: "user:alice", Role: "reader", Workspace: "PROD", CreatedOn: t3, CreatedBy: "admin"}
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.InsertRoleAssignment(again) })
	list("user:alice", "prod", again)
	list("", "", as[1], as[2], as[3], again, as[4])
}
