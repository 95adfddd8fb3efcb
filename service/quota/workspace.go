package quota

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// Workspace quotas are Azure's workspace-level vCPU limits per VM family
// (set with the updateQuotas operation): a workspace's dedicated nodes
// and instances of a family stay under its own limit as well as under
// the location's. A workspace without one for a family shares the
// location's limit with the others. They are stored per workspace and
// family, read with the rest of the state on every planning pass, so
// that every server sharing the store enforces the same limits.

// ListWorkspaceQuotas returns, for every workspace whose quotas the caller
// may read, each VM family of the location's sizes with its limit and use.
func (q *Quotas) ListWorkspaceQuotas(ctx context.Context, location string) ([]money.WorkspaceQuota, error) {
	loc, err := q.cfg.Catalog.Location(location)
	if err != nil {
		return nil, err
	}
	families := q.familiesAt(loc)
	var out []money.WorkspaceQuota
	p := identity.PrincipalFrom(ctx)
	err = q.cfg.Store.View(ctx, func(tx store.Tx) error {
		wss, err := tx.ListWorkspaces()
		if err != nil {
			return err
		}
		for _, ws := range wss {
			if q.cfg.Auth.Authorize(ctx, p, ws.Name, identity.ActQuotasRead) != nil {
				continue
			}
			own, err := tx.GetWorkspaceQuotas(ws.Name)
			if err != nil {
				return err
			}
			used, err := q.workspaceFamilyUse(tx, ws.Name)
			if err != nil {
				return err
			}
			for _, f := range families {
				wq := money.WorkspaceQuota{Workspace: ws.Name, ResourceGroup: ws.ResourceGroup, Location: loc.Name, Family: f, Limit: loc.Quota.FamilyLimit(f), Used: used[strings.ToLower(f)]}
				if lim, ok := own[strings.ToLower(f)]; ok {
					wq.Limit, wq.Own = lim, true
				}
				out = append(out, wq)
			}
		}
		return nil
	})
	return out, err
}

// UpdateWorkspaceQuotas sets workspaces' family limits at a location, as
// Azure's updateQuotas: each update is applied or refused on its own, with
// its status; a limit may not exceed the location's limit of the family
// nor fall below what the workspace's clusters' min_instances hold. The
// caller needs quotas/write in each workspace named (Owner); all the
// updates are written in one transaction.
func (q *Quotas) UpdateWorkspaceQuotas(ctx context.Context, location string, updates []money.QuotaUpdate) ([]money.QuotaUpdateResult, error) {
	loc, err := q.cfg.Catalog.Location(location)
	if err != nil {
		return nil, err
	}
	p := identity.PrincipalFrom(ctx)
	for _, u := range updates {
		if err := q.cfg.Auth.Authorize(ctx, p, u.Workspace, identity.ActQuotasWrite); err != nil {
			return nil, err
		}
	}
	families := map[string]string{}
	for _, f := range q.familiesAt(loc) {
		families[strings.ToLower(f)] = f
	}
	out := make([]money.QuotaUpdateResult, len(updates))
	var changed []string
	err = q.cfg.Store.Update(ctx, func(tx store.Tx) error {
		changed = changed[:0]
		pending := map[string]map[string]int{}
		for i, u := range updates {
			r := money.QuotaUpdateResult{QuotaUpdate: u, Status: money.QuotaSuccess}
			out[i] = r
			ws, err := tx.GetWorkspace(u.Workspace)
			if core.ErrorCode(err) == core.ENOTFOUND {
				return core.WorkspaceNotFound(u.Workspace)
			} else if err != nil {
				return err
			}
			fam, ok := families[strings.ToLower(u.Family)]
			lim := loc.Quota.FamilyLimit(fam)
			switch {
			case !ok:
				r.Status, r.Message = money.QuotaInvalidFamily, fmt.Sprintf("no size at %s is of the VM family %q; see `shoal location show %s`", loc.Name, u.Family, loc.Name)
			case u.Limit < 0:
				r.Status, r.Message = money.QuotaFailure, fmt.Sprintf("limit %d is negative", u.Limit)
			case lim >= 0 && u.Limit > lim:
				r.Status, r.Message = money.QuotaExceedsSubscriptionLimit, fmt.Sprintf("limit %d exceeds %s's limit of %d vCPUs for %s", u.Limit, loc.Name, lim, fam)
			}
			if r.Status == money.QuotaSuccess {
				floor, err := q.clusterMinimum(tx, ws.Name, fam)
				if err != nil {
					return err
				}
				if u.Limit < floor {
					r.Status, r.Message = money.QuotaBelowClusterMinimum, fmt.Sprintf("limit %d is below the %d vCPUs the min_instances of workspace %s's %s clusters hold", u.Limit, floor, ws.Name, fam)
				}
			}
			if r.Status == money.QuotaSuccess {
				r.Workspace, r.Family = ws.Name, fam
				key := strings.ToLower(ws.Name)
				if pending[key] == nil {
					cur, err := tx.GetWorkspaceQuotas(ws.Name)
					if err != nil {
						return err
					}
					if cur == nil {
						cur = map[string]int{}
					}
					pending[key] = cur
				}
				pending[key][strings.ToLower(fam)] = u.Limit
				changed = append(changed, fmt.Sprintf("%s %s=%d", ws.Name, fam, u.Limit))
			}
			out[i] = r
		}
		keys := make([]string, 0, len(pending))
		for k := range pending {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fams := make([]string, 0, len(pending[k]))
			for f := range pending[k] {
				fams = append(fams, f)
			}
			sort.Strings(fams)
			for _, f := range fams {
				if err := tx.PutWorkspaceQuota(k, f, pending[k][f]); err != nil {
					return err
				}
			}
		}
		identity.SetAuditDetail(ctx, "workspace quotas at %s: %s", loc.Name, strings.Join(changed, ", "))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(changed) > 0 {
		q.cfg.Notify() // a raised limit may unblock queued jobs now
	}
	return out, nil
}

// workspaceFamilyUse returns the dedicated vCPUs a workspace's nodes and
// quota-holding stopped instances hold, by lower-cased family.
func (q *Quotas) workspaceFamilyUse(tx store.Tx, ws string) (map[string]int, error) {
	nodes, err := tx.ListNodes(node.NodeFilter{})
	if err != nil {
		return nil, err
	}
	used := map[string]int{}
	for _, n := range nodes {
		if strings.EqualFold(n.Workspace, ws) && !n.LowPriority && n.Holds() {
			used[strings.ToLower(n.Family)] += n.VCPUs
		}
	}
	stopped, err := q.instancesWithoutNode(tx, "", func(c *compute.Compute) bool { return strings.EqualFold(c.Workspace, ws) })
	if err != nil {
		return nil, err
	}
	for _, c := range stopped {
		if size, ok := q.cfg.Catalog.Size(c.Size); ok {
			used[strings.ToLower(size.Family)] += size.VCPUs
		}
	}
	return used, nil
}

// clusterMinimum is the dedicated vCPUs of a family that a workspace's
// clusters keep at their min_instances.
func (q *Quotas) clusterMinimum(tx store.Tx, ws, family string) (int, error) {
	list, err := tx.ListComputes(compute.ComputeFilter{Workspace: ws})
	if err != nil {
		return 0, err
	}
	total := 0
	for _, c := range list {
		if c.IsInstance() || c.Tier == compute.TierLowPriority || c.MinInstances == nil {
			continue
		}
		if size, ok := q.cfg.Catalog.Size(c.Size); ok && strings.EqualFold(size.Family, family) {
			total += *c.MinInstances * size.VCPUs
		}
	}
	return total, nil
}

// checkWorkspaceQuota fails with EQUOTA when need more vCPUs of family
// would take workspace ws past its own limit.
func (q *Quotas) checkWorkspaceQuota(tx store.Tx, ws, family string, need int, what string) error {
	own, err := tx.GetWorkspaceQuotas(ws)
	if err != nil {
		return err
	}
	lim, ok := own[strings.ToLower(family)]
	if !ok {
		return nil
	}
	used, err := q.workspaceFamilyUse(tx, ws)
	if err != nil {
		return err
	}
	if u := used[strings.ToLower(family)]; u+need > lim {
		return core.Errorf(core.EQUOTA, "%s: workspace %s's quota for %s would be %d/%d vCPUs; stop or delete another instance, scale a cluster down or raise the workspace's quota", what, ws, family, u+need, lim)
	}
	return nil
}
