package accounting_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/accounting"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/store"
)

// pricer prices budgets as told: spent per scope, and the scopes it
// cannot price.
type pricer struct {
	db store.Store
	mu sync.Mutex
	// spent is the share of the limit spent, by scope.
	spent  map[string]float64
	broken map[string]bool
	blocks *money.BudgetBlocks
}

func (p *pricer) Store() store.Store { return p.db }

func (p *pricer) BudgetStatusAt(tx store.Tx, ws string, b *money.Budget, now time.Time) (money.BudgetStatus, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken[b.Scope] {
		return money.BudgetStatus{}, core.Errorf(core.EUNAVAILABLE, "the cost history cannot be read")
	}
	pct := p.spent[b.Scope] * 100
	return money.BudgetStatus{Budget: b, Name: b.Name(), PeriodStart: now.Truncate(24 * time.Hour), Spent: p.spent[b.Scope] * b.Limit, Percent: pct, Reached: pct >= 100}, nil
}

func (p *pricer) SetBudgetBlocks(b money.BudgetBlocks) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocks = &b
}

// One budget that cannot be priced does not keep the others' blocks from
// applying, and keeps blocking as it last did; the failure is recorded
// on it. (The check returned at the first error: no block of any budget
// was set, and a reached budget stopped nothing.)
func TestOneFailingBudgetDoesNotHoldUpOthers(t *testing.T) {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	if err := db.Update(ctx, func(tx store.Tx) error {
		for _, u := range []string{"alice", "bob"} {
			if err := tx.PutBudget("ws", &money.Budget{Scope: "user:" + u, Limit: 10, Period: "day", Action: money.BudgetBlock, CreatedOn: tx.Now()}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p := &pricer{db: db, spent: map[string]float64{"user:alice": 1.2, "user:bob": 0.1}, broken: map[string]bool{}}
	a := accounting.New(p)
	if err := a.CheckBudgets(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	if p.blocks == nil || p.blocks.Users["ws"]["alice"] == "" || p.blocks.Users["ws"]["bob"] != "" {
		t.Fatalf("blocks %+v, want alice's alone", p.blocks)
	}
	// Alice's budget can no longer be priced; Bob's is reached.
	p.broken["user:alice"], p.spent["user:bob"] = true, 1.5
	p.blocks = nil
	_ = a.CheckBudgets(ctx, clock.Advance(11*time.Second))
	if p.blocks == nil || p.blocks.Users["ws"]["bob"] == "" {
		t.Fatalf("blocks %+v: bob's reached budget does not block", p.blocks)
	}
	if p.blocks.Users["ws"]["alice"] == "" {
		t.Fatalf("blocks %+v: alice's budget, reached when last priced, no longer blocks", p.blocks)
	}
	var failed int
	_ = db.View(ctx, func(tx store.Tx) error {
		evs, err := tx.ListEvents(core.EventFilter{Workspace: "ws", ResourceType: core.ResourceBudget})
		for _, e := range evs {
			if e.Kind == accounting.EventBudgetCheckFailed && e.ResourceName == "user:alice/day" {
				failed++
			}
		}
		return err
	})
	if failed != 1 {
		t.Fatalf("%d budget_check_failed events on alice's budget, want 1", failed)
	}
}
