package cost_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/service/cost"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest"
)

// allow lets every principal do everything but what deny names
// (workspace/action).
type allow struct{ deny map[string]bool }

func (a allow) Authorize(_ context.Context, _ *identity.Principal, ws, action string) error {
	if a.deny[ws+"/"+action] {
		return core.Errorf(core.EUNAUTHORIZED, "%s in %s refused", action, ws)
	}
	return nil
}

// ledger is a store whose usage ledger holds, in workspace "ws", a
// dedicated DS3_v2 node of the team=vision cluster "cpu" that lived 2
// hours and a low-priority one of the untagged cluster "other" that lived
// 1 hour; it returns the costs over it, the window and the two prices.
type ledger struct {
	db          store.Store
	costs       *cost.Costs
	start, end  time.Time
	dedicated   float64
	lowPriority float64
	notified    int
}

func newLedger(t *testing.T, auth identity.Authorizer) *ledger {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := cfg.Catalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	db, clock := teststore.Open(t)
	l := &ledger{db: db, start: clock.Now()}
	l.costs = cost.New(cost.Config{Store: db, Catalog: cat, Auth: auth, Notify: func() { l.notified++ }})
	size, _ := cat.Size("Standard_DS3_v2")
	l.dedicated, l.lowPriority = size.PricePerHour, size.LowPriorityPricePerHour
	update(t, db, func(tx store.Tx) error {
		vision := teststore.Cluster(tx, "cpu")
		vision.Tags = map[string]string{"team": "vision"}
		if err := tx.InsertCompute(vision); err != nil {
			return err
		}
		if err := tx.InsertCompute(teststore.Cluster(tx, "other")); err != nil {
			return err
		}
		for _, n := range []*node.Node{
			{ID: "n1", Workspace: "ws", Compute: "cpu", Location: "local", Size: size.Name, Family: size.Family, VCPUs: size.VCPUs, State: node.NodeIdle},
			{ID: "n2", Workspace: "ws", Compute: "other", Location: "local", Size: size.Name, Family: size.Family, VCPUs: size.VCPUs, LowPriority: true, State: node.NodeIdle},
		} {
			if err := tx.InsertNode(n); err != nil {
				return err
			}
		}
		return nil
	})
	clock.Advance(time.Hour)
	update(t, db, func(tx store.Tx) error { return tx.DeleteNode("n2") })
	clock.Advance(time.Hour)
	update(t, db, func(tx store.Tx) error { return tx.DeleteNode("n1") })
	l.end = clock.Now()
	return l
}

func update(t *testing.T, db store.Store, f func(tx store.Tx) error) {
	t.Helper()
	if err := db.Update(t.Context(), f); err != nil {
		t.Fatal(err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// The report prices the ledger's node time the same whichever way it is
// grouped, each line on its tier's price; an untagged compute's time is
// the (untagged) line.
func TestCostReportGroupings(t *testing.T) {
	l := newLedger(t, allow{})
	total := 2*l.dedicated + l.lowPriority
	want := map[string]map[string]float64{
		"compute":  {"cpu": 2 * l.dedicated, "other": l.lowPriority},
		"node":     {"n1": 2 * l.dedicated, "n2": l.lowPriority},
		"tier":     {compute.TierDedicated: 2 * l.dedicated, compute.TierLowPriority: l.lowPriority},
		"tag:team": {"vision": 2 * l.dedicated, "(untagged)": l.lowPriority},
		"size":     {"Standard_DS3_v2": total},
		"user":     {cost.IdleKey: total},
		"job":      {cost.IdleKey: total},
	}
	for group, lines := range want {
		got, err := l.costs.CostReport(t.Context(), "ws", l.start, l.end, group)
		if err != nil {
			t.Fatalf("%s: %v", group, err)
		}
		sum := 0.0
		for _, line := range got {
			if !near(line.USD, lines[line.Key]) {
				t.Errorf("%s: line %s costs %v; want %v", group, line.Key, line.USD, lines[line.Key])
			}
			sum += line.USD
		}
		if len(got) != len(lines) || !near(sum, total) {
			t.Errorf("%s: %d lines adding to %v; want %d adding to %v", group, len(got), sum, len(lines), total)
		}
	}
	// Only the window's part of a node's life is priced.
	got, err := l.costs.CostReport(t.Context(), "ws", l.start.Add(90*time.Minute), l.end, "compute")
	if err != nil || len(got) != 1 || got[0].Key != "cpu" || !near(got[0].NodeHours, 0.5) {
		t.Errorf("the last half hour = %+v, %v; want cpu's 0.5 node-hours alone", got, err)
	}
}

// A bad group_by or window is refused naming the field; a caller without
// computes/read in the workspace gets no report.
func TestCostReportRefusals(t *testing.T) {
	l := newLedger(t, allow{deny: map[string]bool{"secret/" + identity.ActComputesRead: true}})
	for _, c := range []struct {
		group       string
		since, upto time.Time
		field       string
	}{
		{"colour", l.start, l.end, "group_by"},
		{"tag:", l.start, l.end, "group_by"},
		{"compute", l.end, l.end, "since"},
	} {
		if _, err := l.costs.CostReport(t.Context(), "ws", c.since, c.upto, c.group); core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != c.field {
			t.Errorf("group %q over [%s, %s): %v; want EINVALID on %s", c.group, c.since, c.upto, err, c.field)
		}
	}
	if _, err := l.costs.CostReport(t.Context(), "secret", l.start, l.end, "compute"); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Errorf("a report without computes/read: %v; want EUNAUTHORIZED", err)
	}
}

// A budget's spend is its scope's node time since its period began: a
// tag's budget counts the tagged compute's nodes only, the workspace's
// every node. Budgets are Owners' (quotas/write) to change, and every
// change tells the controller.
func TestBudgetSpend(t *testing.T) {
	l := newLedger(t, allow{})
	for _, b := range []*money.Budget{
		{Scope: "tag:team=vision", Limit: 2 * l.dedicated, Period: "day", Action: money.BudgetBlock},
		{Scope: "workspace", Limit: 100, Period: "day"},
	} {
		if _, err := l.costs.CreateBudget(t.Context(), "ws", b); err != nil {
			t.Fatal(err)
		}
	}
	list, err := l.costs.ListBudgets(t.Context(), "ws")
	if err != nil || len(list) != 2 {
		t.Fatalf("ListBudgets = %v, %v; want two", list, err)
	}
	spent := map[string]money.BudgetStatus{}
	for _, st := range list {
		spent[st.Scope] = st
	}
	if st := spent["tag:team=vision"]; !near(st.Spent, 2*l.dedicated) || !st.Reached || !near(st.Percent, 100) {
		t.Errorf("tag budget %+v; want 2 dedicated hours spent, reached", st)
	}
	if st := spent["workspace"]; !near(st.Spent, 2*l.dedicated+l.lowPriority) || st.Reached {
		t.Errorf("workspace budget %+v; want every node's time spent, not reached", st)
	}
	if err := l.costs.DeleteBudget(t.Context(), "ws", "workspace/week"); core.ErrorCode(err) != core.ENOTFOUND || !strings.Contains(err.Error(), "shoal budget list") {
		t.Errorf("deleting an unknown budget: %v; want ENOTFOUND naming `shoal budget list`", err)
	}
	if err := l.costs.DeleteBudget(t.Context(), "ws", "workspace/day"); err != nil {
		t.Fatal(err)
	}
	if l.notified != 3 {
		t.Errorf("notified %d times; want once per change (3)", l.notified)
	}
	denied := cost.New(cost.Config{Store: l.db, Auth: allow{deny: map[string]bool{"ws/" + identity.ActQuotasWrite: true}}})
	if _, err := denied.CreateBudget(t.Context(), "ws", &money.Budget{Scope: "workspace", Limit: 1}); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Errorf("a budget without quotas/write: %v; want EUNAUTHORIZED", err)
	}
}

// ParseSince reads whole days, Go durations and RFC 3339 times, and
// refuses the rest naming the since field.
func TestParseSince(t *testing.T) {
	now := storetest.Start
	for in, want := range map[string]time.Time{
		"30d":                  now.Add(-30 * 24 * time.Hour),
		"0d":                   now,
		"12h":                  now.Add(-12 * time.Hour),
		"90m":                  now.Add(-90 * time.Minute),
		"2025-01-02T03:04:05Z": time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
	} {
		if got, err := cost.ParseSince(in, now); err != nil || !got.Equal(want) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1d", "1.5d", "+3d", "-2h", "yesterday"} {
		if _, err := cost.ParseSince(in, now); core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != "since" {
			t.Errorf("ParseSince(%q): %v; want EINVALID on since", in, err)
		}
	}
}
