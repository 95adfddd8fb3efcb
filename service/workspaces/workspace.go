package workspaces

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
)

// CreateWorkspace creates a workspace; its location defaults to the
// catalog's default location and must resolve.
func (s *Service) CreateWorkspace(ctx context.Context, ws *core.Workspace) (*core.Workspace, error) {
	if err := core.ValidateWorkspaceName(ws.Name); err != nil {
		return nil, err
	}
	if ws.Location == "" {
		ws.Location = s.catalog.DefaultLocation()
	}
	if _, err := s.catalog.Location(ws.Location); err != nil {
		return nil, err
	}
	err := s.store.Update(ctx, func(tx store.Tx) error {
		ws.CreatedOn = tx.Now()
		return tx.InsertWorkspace(ws)
	})
	if err != nil {
		return nil, err
	}
	return ws, nil
}

// FindWorkspace returns a workspace by name.
func (s *Service) FindWorkspace(ctx context.Context, name string) (ws *core.Workspace, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		ws, err = tx.GetWorkspace(name)
		return err
	})
	return ws, err
}

// ListWorkspaces returns the workspaces the caller holds a role in (all of
// them for an administrator, or a call made by the server itself): the
// names of other teams' workspaces are theirs to share. A workload
// identity sees only those where its job's submitter holds a role too.
func (s *Service) ListWorkspaces(ctx context.Context) (out []*core.Workspace, err error) {
	p := identity.PrincipalFrom(ctx)
	err = s.store.View(ctx, func(tx store.Tx) error {
		all, err := tx.ListWorkspaces()
		if err != nil || p == nil || p.Admin {
			out = all
			return err
		}
		mine, err := workspacesWithRole(tx, p.ID)
		if err != nil {
			return err
		}
		if p.Kind == identity.PrincipalIdentity && p.OnBehalfOf != "" && p.OnBehalfOf != identity.AdminPrincipalID {
			theirs, err := workspacesWithRole(tx, p.OnBehalfOf)
			if err != nil {
				return err
			}
			for ws := range mine {
				if !theirs[ws] {
					delete(mine, ws)
				}
			}
		}
		out = []*core.Workspace{}
		for _, ws := range all {
			if mine[strings.ToLower(ws.Name)] {
				out = append(out, ws)
			}
		}
		return nil
	})
	return out, err
}

// workspacesWithRole returns the (lower-cased) names of the workspaces
// where principalID holds any role.
func workspacesWithRole(tx store.Tx, principalID string) (map[string]bool, error) {
	list, err := tx.ListRoleAssignments(principalID, "")
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, a := range list {
		out[strings.ToLower(a.Workspace)] = true
	}
	return out, nil
}

// EnsureDefaultWorkspace creates the default workspace if it is missing.
func (s *Service) EnsureDefaultWorkspace(ctx context.Context) error {
	_, err := s.CreateWorkspace(ctx, &core.Workspace{Name: core.DefaultWorkspace})
	if core.ErrorCode(err) == core.ECONFLICT {
		return nil
	}
	return err
}

// BootstrapAdmin creates the default workspace and, on the first start
// only, an admin API token. It returns the new token, or "" when one was
// made before (the token itself is never stored, only its hash).
func (s *Service) BootstrapAdmin(ctx context.Context) (string, error) {
	if err := s.EnsureDefaultWorkspace(ctx); err != nil {
		return "", fmt.Errorf("create default workspace: %w", err)
	}
	return s.access.BootstrapAdminToken(ctx)
}

// DeleteWorkspace deletes a workspace that has no computes and no
// unfinished jobs; otherwise ECONFLICT says what remains. The default
// workspace is not deleted: every start creates it again.
func (s *Service) DeleteWorkspace(ctx context.Context, name string) error {
	if strings.EqualFold(strings.TrimSpace(name), core.DefaultWorkspace) {
		return core.FieldErrorf("name", "the workspace %q cannot be deleted: the server creates it again on every start", core.DefaultWorkspace)
	}
	return s.store.Update(ctx, func(tx store.Tx) error {
		ws, err := tx.GetWorkspace(name)
		if err != nil {
			return err
		}
		computes, err := tx.ListComputes(compute.ComputeFilter{Workspace: ws.Name})
		if err != nil {
			return err
		}
		jobs, err := tx.ListJobs(job.JobFilter{Workspace: ws.Name, Statuses: unfinishedJobStatuses})
		if err != nil {
			return err
		}
		var remains []string
		if len(computes) > 0 {
			names := make([]string, len(computes))
			for i, c := range computes {
				names[i] = c.Name
			}
			remains = append(remains, countedNames(names, "compute", "computes"))
		}
		if len(jobs) > 0 {
			names := make([]string, len(jobs))
			for i, j := range jobs {
				names[i] = j.Name
			}
			remains = append(remains, countedNames(names, "unfinished job", "unfinished jobs"))
		}
		if len(remains) > 0 {
			return core.Errorf(core.ECONFLICT, "workspace %q still has %s: delete the computes (shoal compute delete -n NAME -w %s) and cancel or wait for the jobs first",
				ws.Name, strings.Join(remains, " and "), ws.Name)
		}
		return tx.DeleteWorkspace(ws.Name)
	})
}

// unfinishedJobStatuses are the job statuses that are not final.
var unfinishedJobStatuses = []string{job.JobNotStarted, job.JobQueued, job.JobPreparing, job.JobRunning, job.JobFinalizing, job.JobCancelRequested}

// countedNames is "2 computes (a, b)", naming at most five.
func countedNames(names []string, one, many string) string {
	sort.Strings(names)
	word := many
	if len(names) == 1 {
		word = one
	}
	shown := names
	more := ""
	if len(names) > 5 {
		shown, more = names[:5], fmt.Sprintf(", and %d more", len(names)-5)
	}
	return fmt.Sprintf("%d %s (%s%s)", len(names), word, strings.Join(shown, ", "), more)
}
