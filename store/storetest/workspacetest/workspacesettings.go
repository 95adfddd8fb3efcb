package workspacetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// Budgets are per workspace (named case-insensitively), replaced by scope
// and period, listed by Name, and read back with their creation time.
func testBudgets(t *testing.T, s store.Store, clock *stcheck.Clock) {
	list := func(ws string) []*money.Budget {
		var out []*money.Budget
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			out, err = tx.ListBudgets(ws)
			return err
		})
		return out
	}
	if got := list("ws"); len(got) != 0 {
		t.Fatalf("ListBudgets of a workspace without budgets = %v", got)
	}
	created := stcheck.Start.UTC().Truncate(time.Microsecond)
	month := &money.Budget{Scope: "workspace", Limit: 500.25, Period: "month", Action: "block", CreatedOn: created, CreatedBy: "alice"}
	tag := &money.Budget{Scope: "tag:team=a/b", Limit: 10, Period: "day", Action: "warn", CreatedOn: created}
	user := &money.Budget{Scope: "user:bob", Limit: 1, Period: "week", Action: "warn", CreatedOn: created, CreatedBy: "alice"}
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, b := range []*money.Budget{month, tag, user} {
			if err := tx.PutBudget("WS", b); err != nil {
				return err
			}
		}
		return tx.PutBudget("other", &money.Budget{Scope: "workspace", Limit: 1, Period: "day", Action: "warn", CreatedOn: created})
	})
	want := []*money.Budget{tag, user, month} // by Name: "tag:…/day" < "user:bob/week" < "workspace/month"
	if got := list("ws"); !reflect.DeepEqual(got, want) {
		t.Errorf("ListBudgets = %s; want %s", stcheck.JSON(got), stcheck.JSON(want))
	}

	// Same scope and period: replaced, not added.
	raised := *month
	raised.Limit, raised.Action, raised.CreatedBy = 900, "warn", "carol"
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.PutBudget("ws", &raised) })
	want = []*money.Budget{tag, user, &raised}
	if got := list("Ws"); !reflect.DeepEqual(got, want) {
		t.Errorf("ListBudgets after a replace = %s; want %s", stcheck.JSON(got), stcheck.JSON(want))
	}

	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteBudget("ws", tag.Name()) })
	want = []*money.Budget{user, &raised}
	if got := list("ws"); !reflect.DeepEqual(got, want) {
		t.Errorf("ListBudgets after a delete = %s; want %s", stcheck.JSON(got), stcheck.JSON(want))
	}
	err := s.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteBudget("ws", tag.Name()) })
	stcheck.WantCode(t, "DeleteBudget of a deleted budget", err, core.ENOTFOUND)
	err = s.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteBudget("ws", "workspace/day") })
	stcheck.WantCode(t, "DeleteBudget of another workspace's budget", err, core.ENOTFOUND)
	if got := list("other"); len(got) != 1 {
		t.Errorf("the other workspace's budgets = %s", stcheck.JSON(got))
	}
}

// A workspace's quotas are by lower-cased family; a family's limit is
// replaced.
func testWorkspaceQuotas(t *testing.T, s store.Store, clock *stcheck.Clock) {
	get := func(ws string) map[string]int {
		var out map[string]int
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			out, err = tx.GetWorkspaceQuotas(ws)
			return err
		})
		return out
	}
	if got := get("ws"); len(got) != 0 {
		t.Fatalf("GetWorkspaceQuotas of a workspace without quotas = %v", got)
	}
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.PutWorkspaceQuota("WS", "standardNCFamily", 24); err != nil {
			return err
		}
		if err := tx.PutWorkspaceQuota("ws", "standardDFamily", -1); err != nil {
			return err
		}
		return tx.PutWorkspaceQuota("other", "standardDFamily", 4)
	})
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.PutWorkspaceQuota("ws", "STANDARDNCFAMILY", 48) })
	want := map[string]int{"standardncfamily": 48, "standarddfamily": -1}
	if got := get("Ws"); !reflect.DeepEqual(got, want) {
		t.Errorf("GetWorkspaceQuotas = %v; want %v", got, want)
	}
	if got := get("other"); !reflect.DeepEqual(got, map[string]int{"standarddfamily": 4}) {
		t.Errorf("the other workspace's quotas = %v", got)
	}
}

// A workspace without limits has the zero value; limits are replaced
// whole.
func testWorkspaceLimits(t *testing.T, s store.Store, clock *stcheck.Clock) {
	get := func(ws string) money.WorkspaceLimits {
		var out money.WorkspaceLimits
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			out, err = tx.GetWorkspaceLimits(ws)
			return err
		})
		return out
	}
	if got := get("ws"); got != (money.WorkspaceLimits{}) {
		t.Fatalf("GetWorkspaceLimits of a workspace without limits = %+v", got)
	}
	l := money.WorkspaceLimits{MaxLogBytes: 1 << 20, StorageQuotaBytes: 5 << 40}
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.PutWorkspaceLimits("WS", l) })
	if got := get("ws"); got != l {
		t.Errorf("GetWorkspaceLimits = %+v; want %+v", got, l)
	}
	l2 := money.WorkspaceLimits{StorageQuotaBytes: 7}
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.PutWorkspaceLimits("ws", l2) })
	if got := get("Ws"); got != l2 {
		t.Errorf("GetWorkspaceLimits after a replace = %+v; want %+v", got, l2)
	}
	if got := get("other"); got != (money.WorkspaceLimits{}) {
		t.Errorf("another workspace's limits = %+v", got)
	}
}
