package accounting

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/format"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/store"
)

// budgetCheckInterval is how often the budgets are priced: a pass more
// often than that prices nothing.
const budgetCheckInterval = 10 * time.Second

// CheckBudgets prices every budget, records the warnings crossed, and
// keeps the blocks scale-up reads.
func (c *Accounting) CheckBudgets(ctx context.Context, now time.Time) error {
	c.mu.Lock()
	due := c.lastBudgetCheck.IsZero() || now.Sub(c.lastBudgetCheck) >= budgetCheckInterval
	c.mu.Unlock()
	if !due {
		return nil
	}
	s := c.s
	blocks := money.BudgetBlocks{Workspace: map[string]string{}, Tags: map[string]map[string]string{}, Users: map[string]map[string]string{}}
	type alert struct {
		ws   string
		st   money.BudgetStatus
		pct  int
		prev string
	}
	var alerts []alert
	type failure struct {
		ws  string
		b   *money.Budget
		err error
	}
	var failures []failure
	reached, seen := map[string]string{}, map[string]bool{}
	priced := map[string]BudgetSpend{}
	c.mu.Lock()
	before := c.reached
	c.mu.Unlock()
	err := s.Store().View(ctx, func(tx store.Tx) error {
		wss, err := tx.ListWorkspaces()
		if err != nil {
			return err
		}
		for _, ws := range wss {
			list, err := tx.ListBudgets(ws.Name)
			if err != nil || len(list) == 0 {
				if err != nil {
					return err
				}
				continue
			}
			for _, b := range list {
				key := budgetKey(ws.Name, b)
				seen[key] = true
				// One budget that cannot be priced is that budget's
				// failure: the others are priced and their blocks kept.
				// It blocks as it last did (a block is not lifted for
				// want of a price), and is priced again after its wait.
				if !c.backoff.Due(key, now) {
					if reason, ok := before[key]; ok {
						reached[key] = reason
						addBlock(blocks, ws.Name, b, reason)
					}
					continue
				}
				st, err := s.BudgetStatusAt(tx, ws.Name, b, now)
				if err != nil {
					failures = append(failures, failure{ws.Name, b, err})
					if reason, ok := before[key]; ok {
						reached[key] = reason
						addBlock(blocks, ws.Name, b, reason)
					}
					continue
				}
				c.backoff.Succeeded(key)
				if st.Limit > 0 {
					priced[key] = BudgetSpend{Workspace: ws.Name, Budget: b.Name(), Ratio: st.Spent / st.Limit}
				}
				if st.Reached && b.Action == money.BudgetBlock {
					reason := "budget " + b.Describe() + " reached"
					reached[key] = reason
					addBlock(blocks, ws.Name, b, reason)
				}
				crossed := 0
				for _, th := range money.BudgetThresholds {
					if st.Percent >= float64(th) {
						crossed = th
					}
				}
				if crossed == 0 {
					continue
				}
				prev, _ := tx.GetSetting(alertKey(ws.Name, b))
				if prev != alertValue(st.PeriodStart, crossed) {
					alerts = append(alerts, alert{ws: ws.Name, st: st, pct: crossed, prev: prev})
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var errs []error
	for _, a := range alerts {
		// Only higher thresholds in the same period, or any in a new one;
		// each threshold crossed since the last check gets its own event
		// (spend can jump from 40 % to 100 % between two checks).
		done := 0
		if p, t, ok := parseAlert(a.prev); ok && p.Equal(a.st.PeriodStart) {
			done = t
		}
		var pcts []int
		for _, th := range money.BudgetThresholds {
			if th > done && th <= a.pct {
				pcts = append(pcts, th)
			}
		}
		if len(pcts) == 0 {
			continue
		}
		ctx := identity.WithPrincipal(ctx, budgetPrincipal)
		err := s.Store().Update(ctx, func(tx store.Tx) error {
			for _, pct := range pcts {
				verb := "warning"
				if pct >= 100 {
					verb = "reached"
					if a.st.Action == money.BudgetBlock {
						verb = "reached: scale-up stopped for its scope, running jobs finish"
					}
				}
				if err := tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: a.ws, ResourceType: core.ResourceBudget, ResourceName: a.st.Name,
					Kind: core.EventBudget, Actor: "controller",
					Reason: fmt.Sprintf("budget %s at %d %% (%s of %s USD since %s): %s", a.st.Describe(), pct, format.USD(a.st.Spent),
						strconv.FormatFloat(a.st.Limit, 'f', -1, 64), a.st.PeriodStart.Format("2006-01-02"), verb)}); err != nil {
					return err
				}
			}
			return tx.PutSetting(alertKey(a.ws, a.st.Budget), alertValue(a.st.PeriodStart, a.pct))
		})
		if err != nil {
			// Its alert is written by a later check (nothing marks it
			// written); the blocks still apply.
			errs = append(errs, fmt.Errorf("budget %s/%s: recording its alert: %w", a.ws, a.st.Name, err))
		}
	}
	s.SetBudgetBlocks(blocks)
	c.publish(priced, seen)
	c.backoff.Retain(func(k string) bool { return seen[k] })
	for _, f := range failures {
		fl := c.backoff.Failed(budgetKey(f.ws, f.b), now, f.err)
		reason := fl.Reason("pricing budget " + f.b.Describe())
		// Recorded on the budget, and returned (so logged) once per
		// retry, not on every check.
		ctx := identity.WithPrincipal(ctx, budgetPrincipal)
		if err := s.Store().Update(ctx, func(tx store.Tx) error {
			return tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: f.ws, ResourceType: core.ResourceBudget, ResourceName: f.b.Name(),
				Kind: EventBudgetCheckFailed, Actor: "controller", Reason: reason})
		}); err != nil {
			errs = append(errs, err)
		}
		errs = append(errs, fmt.Errorf("budget %s/%s: %w", f.ws, f.b.Name(), f.err))
	}
	c.mu.Lock()
	c.lastBudgetCheck = now
	c.reached = reached
	c.mu.Unlock()
	return errors.Join(errs...)
}

// EventBudgetCheckFailed is the kind of the budget event that records a
// budget that could not be priced (once per retry).
const EventBudgetCheckFailed = "budget_check_failed"

// budgetKey names budget b of workspace ws in the backoff and among the
// budgets reached.
func budgetKey(ws string, b *money.Budget) string {
	return strings.ToLower(ws) + "/" + b.Name()
}

// addBlock adds budget b's block (reason) to blocks.
func addBlock(blocks money.BudgetBlocks, ws string, b *money.Budget, reason string) {
	key := strings.ToLower(ws)
	switch {
	case b.Scope == "workspace":
		blocks.Workspace[key] = reason
	case strings.HasPrefix(b.Scope, "tag:"):
		if blocks.Tags[key] == nil {
			blocks.Tags[key] = map[string]string{}
		}
		blocks.Tags[key][strings.TrimPrefix(b.Scope, "tag:")] = reason
	default:
		if blocks.Users[key] == nil {
			blocks.Users[key] = map[string]string{}
		}
		blocks.Users[key][strings.ToLower(strings.TrimPrefix(b.Scope, "user:"))] = reason
	}
}

func alertKey(ws string, b *money.Budget) string {
	return "budget_alert/" + strings.ToLower(ws) + "/" + b.Name()
}

func alertValue(period time.Time, pct int) string {
	return period.UTC().Format(time.RFC3339) + " " + strconv.Itoa(pct)
}

func parseAlert(v string) (time.Time, int, bool) {
	a, b, ok := strings.Cut(v, " ")
	if !ok {
		return time.Time{}, 0, false
	}
	t, err1 := time.Parse(time.RFC3339, a)
	n, err2 := strconv.Atoi(b)
	return t, n, err1 == nil && err2 == nil
}
