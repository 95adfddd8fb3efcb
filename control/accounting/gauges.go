package accounting

// BudgetGauges receives, after each budget check, every budget's spend
// as a ratio of its limit (the metrics' shoal_budget_spend_ratio, which
// the "budget near its cap" alerts read).
type BudgetGauges interface {
	SetBudgetSpend(spend []BudgetSpend)
}

// BudgetSpend is one budget's spend in its current period.
type BudgetSpend struct {
	// Workspace and Budget name it (Budget is "scope/period", e.g.
	// "workspace/monthly" or "tag:team=nlp/weekly").
	Workspace, Budget string
	// Ratio is the spend over the limit: 0.8 is 80 %, above 1 over it.
	Ratio float64
}

// SetGauges installs where the budget checks' spend goes (the server's
// metrics).
func (c *Accounting) SetGauges(g BudgetGauges) {
	c.mu.Lock()
	c.gauges = g
	c.mu.Unlock()
}

// publish hands the spend of the budgets that still exist to the gauges.
func (c *Accounting) publish(priced map[string]BudgetSpend, seen map[string]bool) {
	c.mu.Lock()
	if c.spend == nil {
		c.spend = map[string]BudgetSpend{}
	}
	for k, v := range priced {
		c.spend[k] = v
	}
	var out []BudgetSpend
	for k, v := range c.spend {
		if !seen[k] {
			delete(c.spend, k) // a deleted budget leaves the metrics
			continue
		}
		out = append(out, v)
	}
	g := c.gauges
	c.mu.Unlock()
	if g != nil {
		g.SetBudgetSpend(out)
	}
}
