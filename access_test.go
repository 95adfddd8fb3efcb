package shoal_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal"
)

// TestBuiltinRoleMatrix pins what each built-in role grants, action by
// action. A new workspace action must be added here, with a decision for
// every role, before the test passes again.
func TestBuiltinRoleMatrix(t *testing.T) {
	type grant struct{ owner, contributor, reader bool }
	matrix := map[string]grant{
		shoal.ActComputesRead:              {true, true, true},
		shoal.ActComputesWrite:             {true, true, false},
		shoal.ActComputesDelete:            {true, true, false},
		shoal.ActComputesStart:             {true, true, false},
		shoal.ActComputesStop:              {true, true, false},
		shoal.ActComputesRestart:           {true, true, false},
		shoal.ActComputesApplicationAccess: {true, true, false},
		shoal.ActComputesUpdateSchedules:   {true, true, false},
		shoal.ActComputesEnableSSO:         {true, true, false},
		shoal.ActComputesPreemptNode:       {true, false, false},
		shoal.ActComputesJoinNode:          {true, false, false},
		shoal.ActJobsRead:                  {true, true, true},
		shoal.ActJobsWrite:                 {true, true, false},
		shoal.ActJobsCancel:                {true, true, false},
		shoal.ActArtifactsWrite:            {true, true, false},
		shoal.ActEnvironmentsRead:          {true, true, true},
		shoal.ActEnvironmentsWrite:         {true, true, false},
		shoal.ActComponentsRead:            {true, true, true},
		shoal.ActComponentsWrite:           {true, true, false},
		shoal.ActRegistriesRead:            {true, true, true},
		shoal.ActRegistriesWrite:           {true, false, false},
		shoal.ActQuotasRead:                {true, true, true},
		shoal.ActQuotasWrite:               {true, false, false},
		shoal.ActRolesRead:                 {true, true, true},
		shoal.ActRolesWrite:                {true, false, false},
		shoal.ActWorkspacesRead:            {true, true, true},
		shoal.ActWorkspacesWrite:           {true, false, false},
		shoal.ActAuditRead:                 {true, true, true},
	}

	roles := map[string]*shoal.RoleDefinition{}
	for _, r := range shoal.BuiltinRoles() {
		if !r.BuiltIn {
			t.Errorf("built-in role %s has BuiltIn unset", r.Name)
		}
		roles[r.Name] = r
	}
	for _, name := range []string{shoal.RoleOwner, shoal.RoleContributor, shoal.RoleReader} {
		if roles[name] == nil {
			t.Fatalf("no built-in role %s", name)
		}
	}
	if len(roles) != 3 {
		t.Errorf("%d built-in roles, want 3 (update the matrix for a new one)", len(roles))
	}

	for _, action := range shoal.WorkspaceActions {
		want, ok := matrix[action]
		if !ok {
			t.Errorf("action %s is in WorkspaceActions but not in the role matrix: decide what each built-in role grants", action)
			continue
		}
		for role, w := range map[string]bool{shoal.RoleOwner: want.owner, shoal.RoleContributor: want.contributor, shoal.RoleReader: want.reader} {
			if got := roles[role].Allows(action); got != w {
				t.Errorf("%s.Allows(%s) = %v, want %v", role, action, got, w)
			}
		}
		// Reader grants exactly the read actions.
		if isRead := strings.HasSuffix(action, "/read"); isRead != want.reader {
			t.Errorf("matrix row %s: reader %v but the action is a read: %v", action, want.reader, isRead)
		}
	}
	for action := range matrix {
		if !slices.Contains(shoal.WorkspaceActions, action) {
			t.Errorf("matrix row %s is not in WorkspaceActions", action)
		}
	}

	// Server-scoped actions are never granted by a workspace role except
	// Owner's "*", and the server refuses them to non-admins anyway; the
	// read-only role must not reach any write.
	for _, a := range []string{shoal.ActUsersWrite, shoal.ActIdentitiesWrite, shoal.ActTokensWrite} {
		if roles[shoal.RoleReader].Allows(a) {
			t.Errorf("Reader allows server action %s", a)
		}
	}
}

// custom returns an (unvalidated) custom role.
func custom(actions []string, notActions ...string) *shoal.RoleDefinition {
	return &shoal.RoleDefinition{Name: "custom", Actions: actions, NotActions: notActions}
}

// TestRoleActionPatterns exercises the action matcher through Allows.
func TestRoleActionPatterns(t *testing.T) {
	cases := []struct {
		name       string
		actions    []string
		notActions []string
		allow      []string
		deny       []string
	}{
		{
			name:    "resource wildcard covers one resource's actions",
			actions: []string{"computes/*"},
			allow:   []string{"computes/start/action", "computes/read", "computes/write", "computes/delete", "computes/preemptNode/action"},
			deny:    []string{"jobs/read", "jobs/write", "roles/write", "quotas/read"},
		},
		{
			name:    "*/read is every read and nothing else",
			actions: []string{"*/read"},
			allow:   []string{"computes/read", "jobs/read", "roles/read", "audit/read"},
			deny:    []string{"computes/write", "computes/start/action", "jobs/cancel/action", "roles/write"},
		},
		{
			name:    "lone star is everything",
			actions: []string{"*"},
			allow:   shoal.WorkspaceActions,
		},
		{
			name:       "NotActions subtract",
			actions:    []string{"computes/*"},
			notActions: []string{"computes/delete", "computes/*/action"},
			allow:      []string{"computes/read", "computes/write"},
			deny:       []string{"computes/delete", "computes/start/action", "computes/stop/action", "jobs/read"},
		},
		{
			name:       "NotActions win over a lone star",
			actions:    []string{"*"},
			notActions: []string{"*/write"},
			allow:      []string{"computes/read", "jobs/cancel/action"},
			deny:       []string{"computes/write", "jobs/write", "roles/write"},
		},
		{
			name:    "matching is case-insensitive",
			actions: []string{"COMPUTES/Start/ACTION", "Jobs/*"},
			allow:   []string{"computes/start/action", "jobs/read", "jobs/cancel/action", "Computes/Start/Action"},
			deny:    []string{"computes/stop/action", "computes/read"},
		},
		{
			name:       "case-insensitive NotActions",
			actions:    []string{"computes/*"},
			notActions: []string{"Computes/PreemptNode/Action"},
			allow:      []string{"computes/read"},
			deny:       []string{"computes/preemptNode/action"},
		},
		{
			name:    "middle wildcard is exactly one segment",
			actions: []string{"computes/*/action"},
			allow:   []string{"computes/start/action", "computes/enableSso/action"},
			deny:    []string{"computes/read", "computes/write", "jobs/cancel/action"},
		},
		{
			name:    "an exact action grants only itself",
			actions: []string{"jobs/read"},
			allow:   []string{"jobs/read"},
			deny:    []string{"jobs/write", "jobs/read/action", "computes/read", "jobs"},
		},
		{
			name:    "a prefix without wildcard is not a wildcard",
			actions: []string{"computes"},
			deny:    []string{"computes/read", "computes/start/action"},
		},
		{
			name: "no actions grant nothing",
			deny: shoal.WorkspaceActions,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := custom(c.actions, c.notActions...)
			for _, a := range c.allow {
				if !r.Allows(a) {
					t.Errorf("actions %v not %v: %s denied, want allowed", c.actions, c.notActions, a)
				}
			}
			for _, a := range c.deny {
				if r.Allows(a) {
					t.Errorf("actions %v not %v: %s allowed, want denied", c.actions, c.notActions, a)
				}
			}
		})
	}
}

func TestValidateRoleDefinition(t *testing.T) {
	ok := &shoal.RoleDefinition{Name: "compute-operator", Actions: []string{"computes/*", "*/read"}, NotActions: []string{"computes/delete"}}
	if err := shoal.ValidateRoleDefinition(ok); err != nil {
		t.Fatalf("valid role refused: %v", err)
	}
	cases := []struct {
		name  string
		role  *shoal.RoleDefinition
		field string
		msg   string
	}{
		{"built-in name", &shoal.RoleDefinition{Name: "Owner", Actions: []string{"*"}}, "name", "built-in"},
		{"built-in name in another case", &shoal.RoleDefinition{Name: "reader", Actions: []string{"*/read"}}, "name", "built-in"},
		{"contributor", &shoal.RoleDefinition{Name: "CONTRIBUTOR", Actions: []string{"jobs/read"}}, "name", "built-in"},
		{"no actions", &shoal.RoleDefinition{Name: "empty"}, "actions", "at least one"},
		{"empty action list", &shoal.RoleDefinition{Name: "empty", Actions: []string{}, NotActions: []string{"jobs/read"}}, "actions", "at least one"},
		{"unknown action", &shoal.RoleDefinition{Name: "odd", Actions: []string{"foo/bar"}}, "actions", "foo/bar"},
		{"unknown among known", &shoal.RoleDefinition{Name: "odd", Actions: []string{"jobs/read", "jobs/fly/action"}}, "actions", "jobs/fly/action"},
		{"unknown not-action", &shoal.RoleDefinition{Name: "odd", Actions: []string{"*"}, NotActions: []string{"foo/bar"}}, "actions", "foo/bar"},
		{"server action", &shoal.RoleDefinition{Name: "odd", Actions: []string{"users/write"}}, "actions", "users/write"},
		{"bad name", &shoal.RoleDefinition{Name: "../x", Actions: []string{"jobs/read"}}, "name", ""},
		{"empty name", &shoal.RoleDefinition{Name: "", Actions: []string{"jobs/read"}}, "name", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := shoal.ValidateRoleDefinition(c.role)
			if err == nil {
				t.Fatalf("%+v accepted", c.role)
			}
			if shoal.ErrorCode(err) != shoal.EINVALID || shoal.ErrorField(err) != c.field {
				t.Fatalf("error %v: code %s field %q, want %s field %q", err, shoal.ErrorCode(err), shoal.ErrorField(err), shoal.EINVALID, c.field)
			}
			if !strings.Contains(shoal.ErrorMessage(err), c.msg) {
				t.Errorf("error %q does not mention %q", shoal.ErrorMessage(err), c.msg)
			}
		})
	}
}
