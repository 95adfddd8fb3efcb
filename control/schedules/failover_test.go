package schedules

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/teststore"
)

// Two servers over one PostgreSQL, each firing under its own leader
// fence: once the second takes the lead, the first's loop (a server
// that does not know yet that it lost the lead) submits and records
// nothing — its writes are refused — and the second fires the firing
// exactly once, however often it runs.
func TestFailoverFiresOnce(t *testing.T) {
	dbs, clock := teststore.Servers(t, 2)
	dbA, dbB := dbs[0], dbs[1]
	h := setUp(t, dbA, clock)
	svcB := services(t, dbB)
	h.create(`{"name": "q", "trigger": {"type": "cron", "expression": "*/15 * * * *"}, "create_job": ` + jobDoc + `}`)

	ctx := t.Context()
	fenceA, termA := teststore.Lead(t, dbA, "a")
	// 2025-03-14 14:15 UTC, a's term.
	now := time.Date(2025, 3, 14, 14, 15, 2, 0, time.UTC)
	clock.Set(now)
	if err := New(h.svc).RunOnce(fenceA, now); err != nil {
		t.Fatal(err)
	}
	if got := h.scheduled(); len(got) != 1 {
		t.Fatalf("%d jobs in a's term, want 1", len(got))
	}
	// b takes the lead; a does not know.
	if err := dbA.Resign(ctx, "controllers", "a"); err != nil {
		t.Fatal(err)
	}
	fenceB, termB := teststore.Lead(t, dbB, "b")
	if termB.Token == termA.Token {
		t.Fatalf("b's term has a's token %d", termA.Token)
	}
	now = time.Date(2025, 3, 14, 14, 30, 1, 0, time.UTC)
	clock.Set(now)
	if err := New(h.svc).RunOnce(fenceA, now); core.ErrorCode(err) != core.ECONFLICT {
		t.Errorf("a's pass after losing the lead: %v, want its writes refused (ECONFLICT)", err)
	}
	if got := h.scheduled(); len(got) != 1 {
		t.Fatalf("a fenced submitted a job: %d jobs", len(got))
	}
	for range 2 {
		if err := New(svcB).RunOnce(fenceB, now); err != nil {
			t.Fatal(err)
		}
	}
	got := h.scheduled()
	if len(got) != 2 {
		t.Fatalf("%d jobs after b's passes, want 2", len(got))
	}
	if sc := h.get("q"); sc.Status.Fires != 2 || sc.Status.LastJob != "q-20250314t1430" {
		t.Errorf("status = %+v", sc.Status)
	}
}
