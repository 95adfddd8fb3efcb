package accounting_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/accounting"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/store"
)

type spendGauges struct {
	mu  sync.Mutex
	got map[string]float64
}

func (g *spendGauges) SetBudgetSpend(s []accounting.BudgetSpend) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.got = map[string]float64{}
	for _, b := range s {
		g.got[b.Workspace+" "+b.Budget] = b.Ratio
	}
}

// Each check hands every budget's spend ratio to the gauges; a budget
// that cannot be priced keeps its last ratio, a deleted one leaves.
func TestBudgetSpendGauges(t *testing.T) {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	if err := db.Update(ctx, func(tx store.Tx) error {
		for _, u := range []string{"alice", "bob"} {
			if err := tx.PutBudget("ws", &money.Budget{Scope: "user:" + u, Limit: 10, Period: "day", Action: money.BudgetWarn, CreatedOn: tx.Now()}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p := &pricer{db: db, spent: map[string]float64{"user:alice": 0.85, "user:bob": 0.1}, broken: map[string]bool{}}
	a := accounting.New(p)
	g := &spendGauges{}
	a.SetGauges(g)
	if err := a.CheckBudgets(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	if g.got["ws user:alice/day"] != 0.85 || g.got["ws user:bob/day"] != 0.1 {
		t.Fatalf("gauges %v, want alice 0.85 and bob 0.1", g.got)
	}
	p.broken["user:alice"], p.spent["user:bob"] = true, 1.2
	_ = a.CheckBudgets(ctx, clock.Advance(11*time.Second))
	if g.got["ws user:alice/day"] != 0.85 || g.got["ws user:bob/day"] != 1.2 {
		t.Fatalf("gauges %v, want alice's last 0.85 and bob 1.2", g.got)
	}
	if err := db.Update(ctx, func(tx store.Tx) error { return tx.DeleteBudget("ws", "user:bob/day") }); err != nil {
		t.Fatal(err)
	}
	_ = a.CheckBudgets(ctx, clock.Advance(11*time.Second))
	if _, ok := g.got["ws user:bob/day"]; ok || len(g.got) != 1 {
		t.Fatalf("gauges %v after bob's budget was deleted, want alice's alone", g.got)
	}
}
