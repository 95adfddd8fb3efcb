package service

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/shoal-ml/shoal"
)

// Workspace quotas are Azure's workspace-level vCPU limits per VM family
// (set with the updateQuotas operation): a workspace's dedicated nodes
// and instances of a family stay under its own limit as well as under
// the location's. A workspace without one for a family shares the
// location's limit with the others. They are stored per workspace and
// family, read with the rest of the state on every planning pass, so
// that every server sharing the store enforces the same limits.

// readWorkspaceQuotas returns a workspace's limits by lower-cased family
// (nil when it has none).
func readWorkspaceQuotas(tx shoal.Tx, ws string) (map[string]int, error) {
	q, err := tx.GetWorkspaceQuotas(ws)
	if err != nil || len(q) == 0 {
		return nil, err
	}
	return q, nil
}

// WorkspaceQuota is one family's limit in one workspace; see
// shoal.WorkspaceQuota.
type WorkspaceQuota = shoal.WorkspaceQuota

// Quota update outcomes, Azure's QuotaUpdateParameters statuses; see
// shoal.QuotaSuccess.
const (
	QuotaSuccess                  = shoal.QuotaSuccess
	QuotaInvalidFamily            = shoal.QuotaInvalidFamily
	QuotaExceedsSubscriptionLimit = shoal.QuotaExceedsSubscriptionLimit
	QuotaBelowClusterMinimum      = shoal.QuotaBelowClusterMinimum
	QuotaFailure                  = shoal.QuotaFailure
)

// QuotaUpdate asks for a workspace's limit of a family; see
// shoal.QuotaUpdate.
type QuotaUpdate = shoal.QuotaUpdate

// QuotaUpdateResult is one update's outcome; see shoal.QuotaUpdateResult.
type QuotaUpdateResult = shoal.QuotaUpdateResult

// ListWorkspaceQuotas returns, for every workspace whose quotas the caller
// may read, each VM family of the location's sizes with its limit and use.
func (s *Services) ListWorkspaceQuotas(ctx context.Context, location string) ([]WorkspaceQuota, error) {
	loc, err := s.catalog.Location(location)
	if err != nil {
		return nil, err
	}
	families := s.familiesAt(loc)
	var out []WorkspaceQuota
	p := shoal.PrincipalFrom(ctx)
	err = s.store.View(ctx, func(tx shoal.Tx) error {
		wss, err := tx.ListWorkspaces()
		if err != nil {
			return err
		}
		for _, ws := range wss {
			if s.Authorize(ctx, p, ws.Name, shoal.ActQuotasRead) != nil {
				continue
			}
			own, err := readWorkspaceQuotas(tx, ws.Name)
			if err != nil {
				return err
			}
			used, err := s.workspaceFamilyUse(tx, ws.Name)
			if err != nil {
				return err
			}
			for _, f := range families {
				q := WorkspaceQuota{Workspace: ws.Name, ResourceGroup: ws.ResourceGroup, Location: loc.Name, Family: f, Limit: loc.Quota.FamilyLimit(f), Used: used[strings.ToLower(f)]}
				if lim, ok := own[strings.ToLower(f)]; ok {
					q.Limit, q.Own = lim, true
				}
				out = append(out, q)
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
func (s *Services) UpdateWorkspaceQuotas(ctx context.Context, location string, updates []QuotaUpdate) ([]QuotaUpdateResult, error) {
	loc, err := s.catalog.Location(location)
	if err != nil {
		return nil, err
	}
	p := shoal.PrincipalFrom(ctx)
	for _, u := range updates {
		if err := s.Authorize(ctx, p, u.Workspace, shoal.ActQuotasWrite); err != nil {
			return nil, err
		}
	}
	families := map[string]string{}
	for _, f := range s.familiesAt(loc) {
		families[strings.ToLower(f)] = f
	}
	out := make([]QuotaUpdateResult, len(updates))
	var changed []string
	err = s.store.Update(ctx, func(tx shoal.Tx) error {
		changed = changed[:0]
		pending := map[string]map[string]int{}
		for i, u := range updates {
			r := QuotaUpdateResult{QuotaUpdate: u, Status: QuotaSuccess}
			out[i] = r
			ws, err := tx.GetWorkspace(u.Workspace)
			if shoal.ErrorCode(err) == shoal.ENOTFOUND {
				return shoal.WorkspaceNotFound(u.Workspace)
			} else if err != nil {
				return err
			}
			fam, ok := families[strings.ToLower(u.Family)]
			lim := loc.Quota.FamilyLimit(fam)
			switch {
			case !ok:
				r.Status, r.Message = QuotaInvalidFamily, fmt.Sprintf("no size at %s is of the VM family %q; see `shoal location show %s`", loc.Name, u.Family, loc.Name)
			case u.Limit < 0:
				r.Status, r.Message = QuotaFailure, fmt.Sprintf("limit %d is negative", u.Limit)
			case lim >= 0 && u.Limit > lim:
				r.Status, r.Message = QuotaExceedsSubscriptionLimit, fmt.Sprintf("limit %d exceeds %s's limit of %d vCPUs for %s", u.Limit, loc.Name, lim, fam)
			}
			if r.Status == QuotaSuccess {
				floor, err := s.clusterMinimum(tx, ws.Name, fam)
				if err != nil {
					return err
				}
				if u.Limit < floor {
					r.Status, r.Message = QuotaBelowClusterMinimum, fmt.Sprintf("limit %d is below the %d vCPUs the min_instances of workspace %s's %s clusters hold", u.Limit, floor, ws.Name, fam)
				}
			}
			if r.Status == QuotaSuccess {
				r.Workspace, r.Family = ws.Name, fam
				key := strings.ToLower(ws.Name)
				if pending[key] == nil {
					cur, err := readWorkspaceQuotas(tx, ws.Name)
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
		shoal.SetAuditDetail(ctx, "workspace quotas at %s: %s", loc.Name, strings.Join(changed, ", "))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(changed) > 0 {
		s.notify() // a raised limit may unblock queued jobs now
	}
	return out, nil
}

// familiesAt returns the VM families of a location's sizes, sorted.
func (s *Services) familiesAt(loc *shoal.Location) []string {
	seen := map[string]bool{}
	var out []string
	for _, sz := range s.catalog.SizesAt(loc) {
		if !seen[sz.Family] {
			seen[sz.Family] = true
			out = append(out, sz.Family)
		}
	}
	sort.Strings(out)
	return out
}

// workspaceFamilyUse returns the dedicated vCPUs a workspace's nodes and
// quota-holding stopped instances hold, by lower-cased family.
func (s *Services) workspaceFamilyUse(tx shoal.Tx, ws string) (map[string]int, error) {
	st, err := ReadNodes(tx)
	if err != nil {
		return nil, err
	}
	return s.workspaceUse(st, ws), nil
}

// workspaceUse counts from a state what workspaceFamilyUse returns.
func (s *Services) workspaceUse(st *State, ws string) map[string]int {
	used := map[string]int{}
	for _, n := range st.Nodes {
		if strings.EqualFold(n.Workspace, ws) && !n.LowPriority && n.Holds() {
			used[strings.ToLower(n.Family)] += n.VCPUs
		}
	}
	for _, c := range st.Stopped {
		if strings.EqualFold(c.Workspace, ws) {
			if size, ok := s.catalog.Size(c.Size); ok {
				used[strings.ToLower(size.Family)] += size.VCPUs
			}
		}
	}
	return used
}

// clusterMinimum is the dedicated vCPUs of a family that a workspace's
// clusters keep at their min_instances.
func (s *Services) clusterMinimum(tx shoal.Tx, ws, family string) (int, error) {
	list, err := tx.ListComputes(shoal.ComputeFilter{Workspace: ws})
	if err != nil {
		return 0, err
	}
	total := 0
	for _, c := range list {
		if c.IsInstance() || c.Tier == shoal.TierLowPriority || c.MinInstances == nil {
			continue
		}
		if size, ok := s.catalog.Size(c.Size); ok && strings.EqualFold(size.Family, family) {
			total += *c.MinInstances * size.VCPUs
		}
	}
	return total, nil
}

// checkWorkspaceQuota fails with EQUOTA when need more vCPUs of family
// would take workspace ws past its own limit.
func (s *Services) checkWorkspaceQuota(tx shoal.Tx, ws, family string, need int, what string) error {
	own, err := readWorkspaceQuotas(tx, ws)
	if err != nil {
		return err
	}
	lim, ok := own[strings.ToLower(family)]
	if !ok {
		return nil
	}
	used, err := s.workspaceFamilyUse(tx, ws)
	if err != nil {
		return err
	}
	if u := used[strings.ToLower(family)]; u+need > lim {
		return shoal.Errorf(shoal.EQUOTA, "%s: workspace %s's quota for %s would be %d/%d vCPUs; stop or delete another instance, scale a cluster down or raise the workspace's quota", what, ws, family, u+need, lim)
	}
	return nil
}
