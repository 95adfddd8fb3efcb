package service

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/autoscaler"
	"github.com/shoal-ml/shoal/scheduler"
)

// Budgets live in one setting per workspace; their spend is priced from
// the usage ledger (cost.go) on the controller's full passes, which record
// warnings at 50, 80 and 100 % as events (once per period each) and keep
// the blocked scopes that scale-up skips.

func budgetsKey(ws string) string { return "budgets/" + strings.ToLower(ws) }

func readBudgets(tx shoal.Tx, ws string) ([]*shoal.Budget, error) {
	v, err := tx.GetSetting(budgetsKey(ws))
	if shoal.ErrorCode(err) == shoal.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var out []*shoal.Budget
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		return nil, fmt.Errorf("workspace %s: stored budgets: %w", ws, err)
	}
	return out, nil
}

func writeBudgets(tx shoal.Tx, ws string, list []*shoal.Budget) error {
	b, _ := json.Marshal(list)
	return tx.PutSetting(budgetsKey(ws), string(b))
}

// BudgetStatus is a budget with its spend; see shoal.BudgetStatus.
type BudgetStatus = shoal.BudgetStatus

// CreateBudget adds (or replaces, by scope and period) a budget; Owners
// (quotas/write) only.
func (s *Services) CreateBudget(ctx context.Context, ws string, b *shoal.Budget) (*shoal.Budget, error) {
	if err := s.Authorize(ctx, shoal.PrincipalFrom(ctx), ws, shoal.ActQuotasWrite); err != nil {
		return nil, err
	}
	if err := shoal.ValidateBudget(b); err != nil {
		return nil, err
	}
	err := s.store.Update(ctx, func(tx shoal.Tx) error {
		if _, err := tx.GetWorkspace(ws); err != nil {
			return err
		}
		list, err := readBudgets(tx, ws)
		if err != nil {
			return err
		}
		b.CreatedOn, b.CreatedBy = tx.Now(), shoal.ActorName(ctx)
		out := []*shoal.Budget{b}
		for _, x := range list {
			if x.Name() != b.Name() {
				out = append(out, x)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
		shoal.SetAuditDetail(ctx, "budget %s: %s, %s", b.Name(), b.Describe(), b.Action)
		return writeBudgets(tx, ws, out)
	})
	if err != nil {
		return nil, err
	}
	s.notify()
	return b, nil
}

// DeleteBudget removes a budget by name (scope/period).
func (s *Services) DeleteBudget(ctx context.Context, ws, name string) error {
	if err := s.Authorize(ctx, shoal.PrincipalFrom(ctx), ws, shoal.ActQuotasWrite); err != nil {
		return err
	}
	err := s.store.Update(ctx, func(tx shoal.Tx) error {
		list, err := readBudgets(tx, ws)
		if err != nil {
			return err
		}
		var out []*shoal.Budget
		for _, x := range list {
			if x.Name() != name {
				out = append(out, x)
			}
		}
		if len(out) == len(list) {
			return shoal.Errorf(shoal.ENOTFOUND, "no budget %q in workspace %s (see `shoal budget list`)", name, ws)
		}
		shoal.SetAuditDetail(ctx, "budget %s deleted", name)
		return writeBudgets(tx, ws, out)
	})
	if err == nil {
		s.notify()
	}
	return err
}

// ListBudgets returns a workspace's budgets with their spend now.
func (s *Services) ListBudgets(ctx context.Context, ws string) ([]BudgetStatus, error) {
	if err := s.Authorize(ctx, shoal.PrincipalFrom(ctx), ws, shoal.ActQuotasRead); err != nil {
		return nil, err
	}
	var out []BudgetStatus
	err := s.store.View(ctx, func(tx shoal.Tx) error {
		list, err := readBudgets(tx, ws)
		if err != nil {
			return err
		}
		for _, b := range list {
			st, err := s.budgetStatus(tx, ws, b, tx.Now())
			if err != nil {
				return err
			}
			out = append(out, st)
		}
		return nil
	})
	return out, err
}

// budgetStatus prices a budget's scope since its period began.
func (s *Services) budgetStatus(tx shoal.Tx, ws string, b *shoal.Budget, now time.Time) (BudgetStatus, error) {
	start := b.PeriodStart(now)
	st := BudgetStatus{Budget: b, Name: b.Name(), PeriodStart: start}
	usage, err := tx.ListNodeUsage(ws, start, now)
	if err != nil {
		return st, err
	}
	switch {
	case b.Scope == "workspace":
		for _, u := range usage {
			st.Spent += u.Overlap(start, now).Hours() * s.price(u.Size, u.LowPriority)
		}
	case strings.HasPrefix(b.Scope, "tag:"):
		k, v, _ := strings.Cut(strings.TrimPrefix(b.Scope, "tag:"), "=")
		computes, err := tx.ListComputes(shoal.ComputeFilter{Workspace: ws})
		if err != nil {
			return st, err
		}
		tagged := map[string]bool{}
		for _, c := range computes {
			if c.Tags[k] == v {
				tagged[strings.ToLower(c.Name)] = true
			}
		}
		for _, u := range usage {
			if tagged[strings.ToLower(u.Compute)] {
				st.Spent += u.Overlap(start, now).Hours() * s.price(u.Size, u.LowPriority)
			}
		}
	default: // user:NAME — the node time their jobs' ranks ran
		user := strings.TrimPrefix(b.Scope, "user:")
		runs, err := s.rankUsage(tx, ws, usage, start, now)
		if err != nil {
			return st, err
		}
		for _, r := range runs {
			if strings.EqualFold(r.job.CreatedBy, user) || strings.EqualFold(r.job.CreatedByPrincipal, "user:"+user) {
				st.Spent += r.d.Hours() * s.price(r.node.Size, r.node.LowPriority)
			}
		}
	}
	st.Percent = 100 * st.Spent / b.Limit
	st.Reached = st.Spent >= b.Limit
	return st, nil
}

// budgetBlocks is what the block budgets that are reached stop: by
// lower-cased workspace, the reason for the workspace, for each tag
// KEY=VALUE and for each user.
type budgetBlocks struct {
	workspace map[string]string
	tags      map[string]map[string]string
	users     map[string]map[string]string
}

// budgetCheckInterval is how often the controller prices the budgets.
const budgetCheckInterval = 10 * time.Second

// checkBudgets prices every budget, records the warnings crossed, and
// keeps the blocks scale-up reads.
func (c *Controller) checkBudgets(ctx context.Context, now time.Time) error {
	c.mu.Lock()
	due := c.lastBudgetCheck.IsZero() || now.Sub(c.lastBudgetCheck) >= budgetCheckInterval
	c.mu.Unlock()
	if !due {
		return nil
	}
	s := c.s
	blocks := budgetBlocks{workspace: map[string]string{}, tags: map[string]map[string]string{}, users: map[string]map[string]string{}}
	type alert struct {
		ws   string
		st   BudgetStatus
		pct  int
		prev string
	}
	var alerts []alert
	err := s.store.View(ctx, func(tx shoal.Tx) error {
		wss, err := tx.ListWorkspaces()
		if err != nil {
			return err
		}
		for _, ws := range wss {
			list, err := readBudgets(tx, ws.Name)
			if err != nil || len(list) == 0 {
				if err != nil {
					return err
				}
				continue
			}
			for _, b := range list {
				st, err := s.budgetStatus(tx, ws.Name, b, now)
				if err != nil {
					return err
				}
				key := strings.ToLower(ws.Name)
				if st.Reached && b.Action == shoal.BudgetBlock {
					reason := "budget " + b.Describe() + " reached"
					switch {
					case b.Scope == "workspace":
						blocks.workspace[key] = reason
					case strings.HasPrefix(b.Scope, "tag:"):
						if blocks.tags[key] == nil {
							blocks.tags[key] = map[string]string{}
						}
						blocks.tags[key][strings.TrimPrefix(b.Scope, "tag:")] = reason
					default:
						if blocks.users[key] == nil {
							blocks.users[key] = map[string]string{}
						}
						blocks.users[key][strings.ToLower(strings.TrimPrefix(b.Scope, "user:"))] = reason
					}
				}
				crossed := 0
				for _, th := range shoal.BudgetThresholds {
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
	for _, a := range alerts {
		// Only higher thresholds in the same period, or any in a new one;
		// each threshold crossed since the last check gets its own event
		// (spend can jump from 40 % to 100 % between two checks).
		done := 0
		if p, t, ok := parseAlert(a.prev); ok && p.Equal(a.st.PeriodStart) {
			done = t
		}
		var pcts []int
		for _, th := range shoal.BudgetThresholds {
			if th > done && th <= a.pct {
				pcts = append(pcts, th)
			}
		}
		if len(pcts) == 0 {
			continue
		}
		ctx := shoal.WithPrincipal(ctx, autoscalerPrincipal)
		err := s.store.Update(ctx, func(tx shoal.Tx) error {
			for _, pct := range pcts {
				verb := "warning"
				if pct >= 100 {
					verb = "reached"
					if a.st.Action == shoal.BudgetBlock {
						verb = "reached: scale-up stopped for its scope, running jobs finish"
					}
				}
				if err := tx.AppendEvent(&shoal.Event{Time: tx.Now(), Workspace: a.ws, ResourceType: shoal.ResourceBudget, ResourceName: a.st.Name,
					Kind: shoal.EventBudget, Actor: "controller",
					Reason: fmt.Sprintf("budget %s at %d %% (%.2f of %s USD since %s): %s", a.st.Describe(), pct, a.st.Spent,
						strconv.FormatFloat(a.st.Limit, 'f', -1, 64), a.st.PeriodStart.Format("2006-01-02"), verb)}); err != nil {
					return err
				}
			}
			return tx.PutSetting(alertKey(a.ws, a.st.Budget), alertValue(a.st.PeriodStart, a.pct))
		})
		if err != nil {
			return err
		}
	}
	s.budgets.set(blocks)
	c.mu.Lock()
	c.lastBudgetCheck = now
	c.mu.Unlock()
	return nil
}

func alertKey(ws string, b *shoal.Budget) string {
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

// budgetBlock returns why a cluster may not scale up (a block budget of
// its workspace or of one of its tags is reached), or "".
func (c *Controller) budgetBlock(comp *shoal.Compute) string {
	blocks, _ := c.s.budgets.get()
	key := strings.ToLower(comp.Workspace)
	if r := blocks.workspace[key]; r != "" {
		return r
	}
	for kv, r := range blocks.tags[key] {
		k, v, _ := strings.Cut(kv, "=")
		if comp.Tags[k] == v {
			return r
		}
	}
	return ""
}

// applyBudgets stops scale-up where a block budget is reached: clusters of
// a blocked workspace or tag, and the node demand of a blocked user's
// queued jobs (their reason says so, from the scheduler's next pass).
func (c *Controller) applyBudgets(ctx context.Context, snap *autoscaler.Snapshot) error {
	for i := range snap.Clusters {
		cl := &snap.Clusters[i]
		ws, name, _ := strings.Cut(cl.Key, "/")
		blocks, _ := c.s.budgets.get()
		if len(blocks.workspace)+len(blocks.tags) == 0 {
			break
		}
		var comp *shoal.Compute
		err := c.s.store.View(ctx, func(tx shoal.Tx) (err error) {
			comp, err = tx.GetCompute(ws, name)
			return err
		})
		if err != nil {
			continue // gone since the snapshot
		}
		cl.BudgetBlocked = c.budgetBlock(comp)
	}
	blocked, err := c.blockedUserJobs(ctx)
	if err != nil {
		return err
	}
	for _, b := range blocked {
		for i := range snap.Clusters {
			if snap.Clusters[i].Key == b.cluster {
				snap.Clusters[i].QueuedNodeDemand = max(snap.Clusters[i].QueuedNodeDemand-b.nodes, 0)
			}
		}
	}
	return nil
}

// blockedJob is a queued job of a user whose block budget is reached.
type blockedJob struct {
	cluster string // computeKey of its compute
	nodes   int    // its instance_count
	reason  string // "budget user:alice 50 USD/week reached"
}

// blockedUserJobs returns the queued jobs, by workspace/name, of users
// whose block budget is reached; nil when no user is blocked (the common
// case costs no read).
func (c *Controller) blockedUserJobs(ctx context.Context) (map[string]blockedJob, error) {
	blocks, _ := c.s.budgets.get()
	users := blocks.users
	var out map[string]blockedJob
	for ws, blocked := range users {
		if len(blocked) == 0 {
			continue
		}
		var queued []*shoal.Job
		err := c.s.store.View(ctx, func(tx shoal.Tx) (err error) {
			queued, err = tx.ListJobs(shoal.JobFilter{Workspace: ws, Statuses: []string{shoal.JobQueued}})
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, j := range queued {
			r := blockedBy(blocked, j)
			if r == "" {
				continue
			}
			if out == nil {
				out = map[string]blockedJob{}
			}
			out[j.Workspace+"/"+j.Name] = blockedJob{cluster: computeKey(j.Workspace, j.Compute), nodes: j.InstanceCount(), reason: r}
		}
	}
	return out, nil
}

// userBudgetReasons overrides the reasons of a blocked user's waiting
// jobs: no node is added for them.
func userBudgetReasons(blocked map[string]blockedJob, waiting map[string]scheduler.Reason) {
	for id, b := range blocked {
		if _, ok := waiting[id]; ok {
			waiting[id] = scheduler.Reason{Code: scheduler.ReasonBudget, Message: b.reason + ": no new nodes for this user's jobs until the next period or a higher limit"}
		}
	}
}

// ListBudgetEvents returns a workspace's budget warnings, oldest first.
func (s *Services) ListBudgetEvents(ctx context.Context, ws string) (out []*shoal.Event, err error) {
	if err := s.Authorize(ctx, shoal.PrincipalFrom(ctx), ws, shoal.ActQuotasRead); err != nil {
		return nil, err
	}
	err = s.store.View(ctx, func(tx shoal.Tx) error {
		out, err = tx.ListEvents(shoal.EventFilter{Workspace: ws, ResourceType: shoal.ResourceBudget})
		return err
	})
	return out, err
}
