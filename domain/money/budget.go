package money

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
)

// Budget actions.
const (
	BudgetWarn  = "warn"
	BudgetBlock = "block"
)

// BudgetThresholds are the shares of a budget at which a warning event is
// recorded, once per period each.
var BudgetThresholds = []int{50, 80, 100}

// Budget caps what a scope may spend in a period, in the catalog's
// currency (USD): at the limit a warn budget records it, a block budget
// also stops scale-up for its scope (running jobs finish).
type Budget struct {
	// Scope is "workspace", "user:NAME" (the user's jobs' node time) or
	// "tag:KEY=VALUE" (the computes with that tag).
	Scope string `json:"scope"`
	// Limit is the amount per period.
	Limit float64 `json:"limit"`
	// Period is day, week (from Monday) or month, in UTC.
	Period    string    `json:"period"`
	Action    string    `json:"action"`
	CreatedOn time.Time `json:"created_on"`
	CreatedBy string    `json:"created_by,omitempty"`
}

// Name identifies a budget in its workspace: its scope and period.
func (b *Budget) Name() string { return b.Scope + "/" + b.Period }

// Describe is how reasons name the budget: "team=vision 500 USD/month".
func (b *Budget) Describe() string {
	s := strings.TrimPrefix(strings.TrimPrefix(b.Scope, "tag:"), "user:")
	return fmt.Sprintf("%s %s USD/%s", s, trimFloat(b.Limit), b.Period)
}

// trimFloat prints an amount as written: 500, 0.5, 0.000001 (cents alone
// would show a limit under a cent as 0).
func trimFloat(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// ValidateBudget checks and normalises a budget.
func ValidateBudget(b *Budget) error {
	b.Scope = strings.TrimSpace(b.Scope)
	switch {
	case b.Scope == "workspace":
	case strings.HasPrefix(b.Scope, "user:"):
		if err := identity.ValidatePrincipalName("scope", strings.TrimPrefix(b.Scope, "user:")); err != nil {
			return core.FieldErrorf("scope", "user:%s: not a user name", strings.TrimPrefix(b.Scope, "user:"))
		}
	case strings.HasPrefix(b.Scope, "tag:"):
		k, v, ok := strings.Cut(strings.TrimPrefix(b.Scope, "tag:"), "=")
		if !ok || k == "" || v == "" {
			return core.FieldErrorf("scope", "%q must be tag:KEY=VALUE, e.g. tag:team=vision", b.Scope)
		}
	default:
		return core.FieldErrorf("scope", "%q must be workspace, user:NAME or tag:KEY=VALUE", b.Scope)
	}
	if !(b.Limit > 0) || b.Limit > 1e12 {
		return core.FieldErrorf("limit", "%v must be an amount above 0", b.Limit)
	}
	switch b.Period {
	case "":
		b.Period = "month"
	case "day", "week", "month":
	default:
		return core.FieldErrorf("period", "%q must be day, week or month", b.Period)
	}
	switch b.Action {
	case "":
		b.Action = BudgetWarn
	case BudgetWarn, BudgetBlock:
	default:
		return core.FieldErrorf("action", "%q must be warn or block", b.Action)
	}
	return nil
}

// PeriodStart returns when the budget's current period began (UTC).
func (b *Budget) PeriodStart(now time.Time) time.Time {
	now = now.UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	switch b.Period {
	case "day":
		return day
	case "week":
		return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	}
	return time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// BudgetStatus is a budget with its spend in the current period.
type BudgetStatus struct {
	*Budget
	Name        string    `json:"name"`
	PeriodStart time.Time `json:"period_start"`
	Spent       float64   `json:"spent"`
	Percent     float64   `json:"percent"`
	Reached     bool      `json:"reached"`
}

// BudgetBlocks is what the block budgets that are reached stop: by
// lower-cased workspace, the reason for the workspace, for each tag
// KEY=VALUE and for each user. The controller's budget pass finds them;
// placement and scale-up obey them.
type BudgetBlocks struct {
	Workspace map[string]string
	Tags      map[string]map[string]string
	Users     map[string]map[string]string
}
