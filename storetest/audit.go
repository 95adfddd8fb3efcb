package storetest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal"
)

func testAudit(t *testing.T, s shoal.Store, clock *Clock) {
	list := func(what string, filter shoal.AuditFilter, want ...*shoal.AuditRecord) {
		t.Helper()
		var got []*shoal.AuditRecord
		view(t, s, func(tx shoal.Tx) (err error) {
			got, err = tx.ListAudit(filter)
			return err
		})
		if len(got) == 0 && len(want) == 0 {
			return
		}
		equal(t, "ListAudit "+what, got, want)
	}
	list("of an empty store", shoal.AuditFilter{})

	raw := clock.Now() // nanoseconds, CET
	first := []*shoal.AuditRecord{
		{Time: raw, PrincipalID: "user:alice", Action: shoal.ActComputesWrite, Target: "workspaces/prod/computes/cpu",
			Workspace: "prod", Source: "192.0.2.1:5555", Outcome: shoal.AuditSucceeded, Detail: "created ✓ \"quoted\""},
		{Time: raw, PrincipalID: "user:bob", Action: shoal.ActComputesDelete, Target: "workspaces/prod/computes/cpu",
			Workspace: "prod", Source: "[2001:db8::1]:443", Outcome: shoal.AuditDenied},
		{Time: raw, PrincipalID: "admin", Action: shoal.ActUsersWrite, Target: "users/carol", Source: "127.0.0.1:1", Outcome: shoal.AuditSucceeded},
	}
	update(t, s, func(tx shoal.Tx) error {
		for _, r := range first {
			if err := tx.AppendAudit(r); err != nil {
				return err
			}
		}
		return nil
	})
	t2 := now(clock.Advance(time.Minute))
	second := []*shoal.AuditRecord{
		// Time left zero: the store fills in tx.Now().
		{PrincipalID: "user:alice", Action: shoal.ActComputesPreemptNode, Target: "workspaces/prod/computes/cpu/nodes/n1",
			Workspace: "prod", Source: "192.0.2.1:5556", Outcome: shoal.AuditFailed, Detail: "node busy"},
		// Neither under nor equal to workspaces/prod/computes/cpu.
		{PrincipalID: "user:alice", Action: shoal.ActComputesRead, Target: "workspaces/prod/computes/cpu2", Workspace: "prod", Outcome: shoal.AuditSucceeded},
		{PrincipalID: "user:alice", Action: shoal.ActComputesRead, Target: "workspaces/prod/computes/cpu-x/nodes/n1", Workspace: "prod", Outcome: shoal.AuditSucceeded},
		{PrincipalID: "user:bob", Action: shoal.ActJobsWrite, Target: "workspaces/Prod/computes/CPU", Workspace: "Prod", Outcome: shoal.AuditSucceeded},
		// LIKE wildcards in targets are plain characters.
		{PrincipalID: "user:bob", Action: shoal.ActJobsWrite, Target: "workspaces/a_b%c/jobs/j", Workspace: "a_b%c", Outcome: shoal.AuditSucceeded},
		{PrincipalID: "user:bob", Action: shoal.ActJobsWrite, Target: "workspaces/axbyc/jobs/j", Workspace: "axbyc", Outcome: shoal.AuditSucceeded},
	}
	update(t, s, func(tx shoal.Tx) error {
		for _, r := range second {
			if err := tx.AppendAudit(r); err != nil {
				return err
			}
		}
		return nil
	})
	all := append(append([]*shoal.AuditRecord{}, first...), second...)
	for i, r := range all {
		if r.ID <= 0 || (i > 0 && r.ID <= all[i-1].ID) {
			t.Errorf("audit record %d has ID %d after %d; IDs must be positive and increasing", i, r.ID, all[max(i-1, 0)].ID)
		}
	}
	if first[0].Time != now(raw) {
		t.Errorf("AppendAudit left Time %v, want its stored form %v", first[0].Time, now(raw))
	}
	if second[0].Time != t2 {
		t.Errorf("AppendAudit of a zero Time set %v, want the transaction time %v", second[0].Time, t2)
	}

	list("all", shoal.AuditFilter{}, all...)
	list("since the first", shoal.AuditFilter{Since: now(raw)}, all...)
	list("since the second transaction", shoal.AuditFilter{Since: t2}, second...)
	// Records are kept to the microsecond: one just after them is later.
	list("since just after the second transaction", shoal.AuditFilter{Since: t2.Add(time.Nanosecond)})
	list("since just after the first transaction", shoal.AuditFilter{Since: raw.Add(time.Nanosecond)}, second...)
	list("since in another zone", shoal.AuditFilter{Since: t2.In(time.FixedZone("PST", -8*3600))}, second...)
	list("by principal", shoal.AuditFilter{PrincipalID: "user:bob"}, all[1], all[6], all[7], all[8])
	list("by unknown principal", shoal.AuditFilter{PrincipalID: "user:nobody"})
	list("by target and what is under it", shoal.AuditFilter{Target: "workspaces/prod/computes/cpu"}, all[0], all[1], all[3])
	list("by target with a trailing part", shoal.AuditFilter{Target: "workspaces/prod/computes/cpu/nodes/n1"}, all[3])
	list("by a target prefix that is no path", shoal.AuditFilter{Target: "workspaces/prod/computes/cp"})
	list("by target with another case", shoal.AuditFilter{Target: "workspaces/Prod/computes/CPU"}, all[6])
	list("by a parent target", shoal.AuditFilter{Target: "workspaces/prod"}, all[0], all[1], all[3], all[4], all[5])
	list("by a target with LIKE wildcards", shoal.AuditFilter{Target: "workspaces/a_b%c"}, all[7])
	list("by target and principal", shoal.AuditFilter{Target: "workspaces/prod", PrincipalID: "user:alice", Since: t2}, all[3], all[4], all[5])

	// Limit keeps the newest records, listed oldest first.
	list("with limit", shoal.AuditFilter{Limit: 2}, all[7], all[8])
	list("with limit 1", shoal.AuditFilter{Limit: 1}, all[8])
	list("with a limit above the count", shoal.AuditFilter{Limit: 100}, all...)
	list("by principal with limit", shoal.AuditFilter{PrincipalID: "user:alice", Limit: 3}, all[3], all[4], all[5])
	list("since with limit", shoal.AuditFilter{Since: now(raw), Target: "workspaces/prod/computes/cpu", Limit: 2}, all[1], all[3])
}
