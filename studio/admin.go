package studio

import (
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/money"
)

// quotaPage shows each location's quota and use, and the workspace's own
// limits.
func (s *Studio) quotaPage(q *req) error {
	type loc struct {
		Name   string
		Usages []catalog.Usage
	}
	var locs []loc
	for _, l := range s.cfg.Svc.Catalog().Locations() {
		u, err := s.cfg.Svc.ListUsages(q.ctx, l.Name)
		if err != nil {
			return err
		}
		locs = append(locs, loc{Name: l.Name, Usages: u})
	}
	var own []money.WorkspaceQuota
	if s.can(q, identity.ActQuotasRead) {
		list, err := s.cfg.Svc.ListWorkspaceQuotas(q.ctx, s.cfg.Svc.Catalog().DefaultLocation())
		if err != nil {
			return err
		}
		for _, x := range list {
			if x.Workspace == q.workspace && (x.Own || x.Used > 0) {
				own = append(own, x)
			}
		}
	}
	return s.render(q, "quota", "Quota and usage", "quota", map[string]any{"Locations": locs, "Own": own})
}

// auditPage is the audit log, newest first (administrators).
func (s *Studio) auditPage(q *req) error {
	if err := s.allowServer(q, auditPageAction); err != nil {
		return err
	}
	f := identity.AuditFilter{PrincipalID: q.r.URL.Query().Get("principal"), Target: q.r.URL.Query().Get("target"), Limit: 500}
	list, err := s.cfg.Svc.ListAudit(q.ctx, f)
	if err != nil {
		return err
	}
	for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
		list[i], list[j] = list[j], list[i]
	}
	return s.render(q, "audit", "Audit log", "audit", map[string]any{"Records": list, "Principal": f.PrincipalID, "Target": f.Target})
}

// usersPage lists users with their tokens, roles and role assignments,
// identities and service principals (administrators).
func (s *Studio) usersPage(q *req) error {
	if err := s.allowServer(q, usersPageAction); err != nil {
		return err
	}
	users, err := s.cfg.Svc.ListUsers(q.ctx)
	if err != nil {
		return err
	}
	type userRow struct {
		*identity.User
		Tokens []*identity.APIToken
	}
	var rows []userRow
	for _, u := range users {
		toks, err := s.cfg.Svc.ListTokens(q.ctx, u.Name)
		if err != nil {
			return err
		}
		rows = append(rows, userRow{User: u, Tokens: toks})
	}
	roles, err := s.cfg.Svc.ListRoles(q.ctx)
	if err != nil {
		return err
	}
	assignments, err := s.cfg.Svc.ListRoleAssignments(q.ctx, "")
	if err != nil {
		return err
	}
	sps, err := s.cfg.Svc.ListServicePrincipals(q.ctx)
	if err != nil {
		return err
	}
	ids, err := s.cfg.Svc.ListIdentities(q.ctx)
	if err != nil {
		return err
	}
	return s.render(q, "users", "Users, roles and tokens", "users", map[string]any{
		"Users": rows, "Roles": roles, "Assignments": assignments, "SPs": sps, "Identities": ids})
}
