// Package accounting is the control loop that keeps what the money views
// read: node samples per cluster (history and cost) and the budgets'
// prices, warnings and blocks. It runs on the leader, each pass at a given
// now (RunOnce); the controller (package control) orders it after the
// other loops and hands it the nodes its placement pass already read.
package accounting

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
)

// Services is what accounting needs of the request services: the store,
// the price of a budget's scope, and where the blocks found go (placement
// and scaling read them). *service.Services implements it.
type Services interface {
	// Store is the (audited) store samples, warnings and alerts go to.
	Store() store.Store
	// BudgetStatusAt prices a budget's scope since its period began.
	BudgetStatusAt(tx store.Tx, ws string, b *money.Budget, now time.Time) (money.BudgetStatus, error)
	// SetBudgetBlocks records the blocking budgets found reached.
	SetBudgetBlocks(b money.BudgetBlocks)
}

var _ Services = (*service.Services)(nil)

// budgetPrincipal is who budget warnings are recorded as: the autoscaler,
// whose scale-up a reached budget stops (as before the loop had a package
// of its own).
var budgetPrincipal = identity.SystemPrincipal("autoscaler")

// Accounting is the loop's state between passes.
type Accounting struct {
	s Services

	mu sync.Mutex
	// samples are the node counts last written per cluster key, and
	// lastPrune when old samples were last removed.
	samples   map[string]*node.NodeSample
	lastPrune time.Time
	// lastBudgetCheck is when the budgets were last priced.
	lastBudgetCheck time.Time
	// reached is the blocking budgets found reached at the last check
	// (by budgetKey, with their reason): one that cannot be priced
	// blocks as it last did.
	reached map[string]string
	// backoff holds the budgets that could not be priced.
	backoff *loop.Backoff
	// spend is each budget's last priced spend (by budgetKey), gauges
	// where it goes (gauges.go).
	spend  map[string]BudgetSpend
	gauges BudgetGauges
}

// New returns the accounting loop over s.
func New(s Services) *Accounting { return &Accounting{s: s, backoff: loop.NewBackoff(0)} }

// RunOnce samples the nodes (read from the store) and prices the budgets
// at now.
func (c *Accounting) RunOnce(ctx context.Context, now time.Time) error {
	return errors.Join(c.SampleNodes(ctx, now, nil), c.CheckBudgets(ctx, now))
}
