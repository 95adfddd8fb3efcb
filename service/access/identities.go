package access

import (
	"context"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

// ListIdentities lists the managed identities the caller may see: to an
// administrator (or the server itself) all of them; to anyone else those
// of the workspaces where they may read computes — a compute's
// system-assigned identity in its workspace, a user-assigned identity in
// each workspace where it holds a role (where it may be attached). An
// identity of another team's workspace, like the workspace's name, is
// that team's to share.
func (s *Service) ListIdentities(ctx context.Context) ([]*identity.Identity, error) {
	p := identity.PrincipalFrom(ctx)
	var (
		all []*identity.Identity
		// in is each identity's workspaces, by name.
		in = map[string][]string{}
	)
	err := s.store.View(ctx, func(tx store.Tx) error {
		var err error
		if all, err = tx.ListIdentities(); err != nil || p == nil || p.Admin {
			return err
		}
		computes, err := tx.ListComputes(compute.ComputeFilter{AllWorkspaces: true})
		if err != nil {
			return err
		}
		for _, c := range computes {
			name := SystemIdentityName(c.Workspace, c.Name)
			in[name] = append(in[name], c.Workspace)
		}
		roles, err := tx.ListRoleAssignments("", "")
		if err != nil {
			return err
		}
		for _, r := range roles {
			if name, ok := strings.CutPrefix(r.PrincipalID, "identity:"); ok {
				in[name] = append(in[name], r.Workspace)
			}
		}
		return nil
	})
	if err != nil || p == nil || p.Admin {
		return all, err
	}
	// Authorize reads the store on its own: outside the transaction,
	// once per workspace.
	readable := map[string]bool{}
	mayRead := func(ws string) bool {
		k := strings.ToLower(ws)
		ok, seen := readable[k]
		if !seen {
			ok = s.Authorize(ctx, p, ws, identity.ActComputesRead) == nil
			readable[k] = ok
		}
		return ok
	}
	out := []*identity.Identity{}
	for _, id := range all {
		for _, ws := range in[id.Name] {
			if mayRead(ws) {
				out = append(out, id)
				break
			}
		}
	}
	return out, nil
}
