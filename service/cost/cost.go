// Package cost prices node time and keeps budgets: the cost report of a
// workspace (grouped by compute, node, size, tier, tag, user or job), a
// job's cost so far, and the budgets' requests and spend.
//
// Prices come from the catalog's sizes and node time from the store's
// usage ledger; the controller's budget pass (control/accounting) calls
// BudgetStatusAt, and placement obeys what it finds. service.Services
// embeds *Costs, so its callers call these methods on the services as
// before.
package cost

import (
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

// Config is what Costs needs of the server.
type Config struct {
	// Store is the store the services write through (audited).
	Store   store.Store
	Catalog *catalog.Catalog
	Auth    identity.Authorizer
	// Notify tells the controller that budgets changed, so that its
	// next pass prices them; it must not block. Nil: nobody.
	Notify func()
}

// Costs serves the cost and budget requests over one store.
type Costs struct {
	cfg Config
}

// New returns the cost and budget requests for cfg.
func New(cfg Config) *Costs {
	if cfg.Notify == nil {
		cfg.Notify = func() {}
	}
	return &Costs{cfg: cfg}
}

// Price is the hourly price of a size on a tier (0 for a size the
// catalog no longer has).
func (c *Costs) Price(size string, lowPriority bool) float64 {
	sz, ok := c.cfg.Catalog.Size(size)
	if !ok {
		return 0
	}
	if lowPriority {
		return sz.LowPriorityPricePerHour
	}
	return sz.PricePerHour
}
