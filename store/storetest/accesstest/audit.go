package accesstest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

func testAudit(t *testing.T, s store.Store, clock *stcheck.Clock) {
	list := func(what string, filter identity.AuditFilter, want ...*identity.AuditRecord) {
		t.Helper()
		var got []*identity.AuditRecord
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.ListAudit(filter)
			return err
		})
		if len(got) == 0 && len(want) == 0 {
			return
		}
		stcheck.Equal(t, "ListAudit "+what, got, want)
	}
	list("of an empty store", identity.AuditFilter{})

	raw := clock.Now() // nanoseconds, CET
	first := []*identity.AuditRecord{
		{Time: raw, PrincipalID: "user:alice", Action: identity.ActComputesWrite, Target: "workspaces/prod/computes/cpu",
			Workspace: "prod", Source: "192.0.2.1:5555", Outcome: identity.AuditSucceeded, Detail: "created ✓ \"quoted\""},
		{Time: raw, PrincipalID: "user:bob", Action: identity.ActComputesDelete, Target: "workspaces/prod/computes/cpu",
			Workspace: "prod", Source: "[2001:db8::1]:443", Outcome: identity.AuditDenied},
		{Time: raw, PrincipalID: "admin", Action: identity.ActUsersWrite, Target: "users/carol", Source: "127.0.0.1:1", Outcome: identity.AuditSucceeded},
	}
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, r := range first {
			if err := tx.AppendAudit(r); err != nil {
				return err
			}
		}
		return nil
	})
	t2 := stcheck.Now(clock.Advance(time.Minute))
	second := []*identity.AuditRecord{
		// Time left zero: the store fills in tx.Now().
		{PrincipalID: "user:alice", Action: identity.ActComputesPreemptNode, Target: "workspaces/prod/computes/cpu/nodes/n1",
			Workspace: "prod", Source: "192.0.2.1:5556", Outcome: identity.AuditFailed, Detail: "node busy"},
		// Neither under nor equal to workspaces/prod/computes/cpu.
		{PrincipalID: "user:alice", Action: identity.ActComputesRead, Target: "workspaces/prod/computes/cpu2", Workspace: "prod", Outcome: identity.AuditSucceeded},
		{PrincipalID: "user:alice", Action: identity.ActComputesRead, Target: "workspaces/prod/computes/cpu-x/nodes/n1", Workspace: "prod", Outcome: identity.AuditSucceeded},
		{PrincipalID: "user:bob", Action: identity.ActJobsWrite, Target: "workspaces/Prod/computes/CPU", Workspace: "Prod", Outcome: identity.AuditSucceeded},
		// LIKE wildcards in targets are plain characters.
		{PrincipalID: "user:bob", Action: identity.ActJobsWrite, Target: "workspaces/a_b%c/jobs/j", Workspace: "a_b%c", Outcome: identity.AuditSucceeded},
		{PrincipalID: "user:bob", Action: identity.ActJobsWrite, Target: "workspaces/axbyc/jobs/j", Workspace: "axbyc", Outcome: identity.AuditSucceeded},
	}
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, r := range second {
			if err := tx.AppendAudit(r); err != nil {
				return err
			}
		}
		return nil
	})
	all := append(append([]*identity.AuditRecord{}, first...), second...)
	for i, r := range all {
		if r.ID <= 0 || (i > 0 && r.ID <= all[i-1].ID) {
			t.Errorf("audit record %d has ID %d after %d; IDs must be positive and increasing", i, r.ID, all[max(i-1, 0)].ID)
		}
	}
	if first[0].Time != stcheck.Now(raw) {
		t.Errorf("AppendAudit left Time %v, want its stored form %v", first[0].Time, stcheck.Now(raw))
	}
	if second[0].Time != t2 {
		t.Errorf("AppendAudit of a zero Time set %v, want the transaction time %v", second[0].Time, t2)
	}

	list("all", identity.AuditFilter{}, all...)
	list("since the first", identity.AuditFilter{Since: stcheck.Now(raw)}, all...)
	list("since the second transaction", identity.AuditFilter{Since: t2}, second...)
	// Records are kept to the microsecond: one just after them is later.
	list("since just after the second transaction", identity.AuditFilter{Since: t2.Add(time.Nanosecond)})
	list("since just after the first transaction", identity.AuditFilter{Since: raw.Add(time.Nanosecond)}, second...)
	list("since in another zone", identity.AuditFilter{Since: t2.In(time.FixedZone("PST", -8*3600))}, second...)
	list("by principal", identity.AuditFilter{PrincipalID: "user:bob"}, all[1], all[6], all[7], all[8])
	list("by unknown principal", identity.AuditFilter{PrincipalID: "user:nobody"})
	list("by target and what is under it", identity.AuditFilter{Target: "workspaces/prod/computes/cpu"}, all[0], all[1], all[3])
	list("by target with a trailing part", identity.AuditFilter{Target: "workspaces/prod/computes/cpu/nodes/n1"}, all[3])
	list("by a target prefix that is no path", identity.AuditFilter{Target: "workspaces/prod/computes/cp"})
	list("by target with another case", identity.AuditFilter{Target: "workspaces/Prod/computes/CPU"}, all[6])
	list("by a parent target", identity.AuditFilter{Target: "workspaces/prod"}, all[0], all[1], all[3], all[4], all[5])
	list("by a target with LIKE wildcards", identity.AuditFilter{Target: "workspaces/a_b%c"}, all[7])
	list("by target and principal", identity.AuditFilter{Target: "workspaces/prod", PrincipalID: "user:alice", Since: t2}, all[3], all[4], all[5])

	// Limit keeps the newest records, listed oldest first.
	list("with limit", identity.AuditFilter{Limit: 2}, all[7], all[8])
	list("with limit 1", identity.AuditFilter{Limit: 1}, all[8])
	list("with a limit above the count", identity.AuditFilter{Limit: 100}, all...)
	list("by principal with limit", identity.AuditFilter{PrincipalID: "user:alice", Limit: 3}, all[3], all[4], all[5])
	list("since with limit", identity.AuditFilter{Since: stcheck.Now(raw), Target: "workspaces/prod/computes/cpu", Limit: 2}, all[1], all[3])
}
