package identity_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
)

// TestBuiltinRoleMatrix pins what each built-in role grants, action by
// action. A new workspace action must be added here, with a decision for
// every role, before the test passes again.
func TestBuiltinRoleMatrix(t *testing.T) {
	type grant struct{ owner, contributor, reader bool }
	matrix := map[string]grant{
		identity.ActComputesRead:              {true, true, true},
		identity.ActComputesWrite:             {true, true, false},
		identity.ActComputesDelete:            {true, true, false},
		identity.ActComputesStart:             {true, true, false},
		identity.ActComputesStop:              {true, true, false},
		identity.ActComputesRestart:           {true, true, false},
		identity.ActComputesApplicationAccess: {true, true, false},
		identity.ActComputesUpdateSchedules:   {true, true, false},
		identity.ActComputesEnableSSO:         {true, true, false},
		identity.ActComputesPreemptNode:       {true, false, false},
		identity.ActComputesJoinNode:          {true, false, false},
		identity.ActJobsRead:                  {true, true, true},
		identity.ActJobsWrite:                 {true, true, false},
		identity.ActJobsCancel:                {true, true, false},
		identity.ActArtifactsWrite:            {true, true, false},
		identity.ActEnvironmentsRead:          {true, true, true},
		identity.ActEnvironmentsWrite:         {true, true, false},
		identity.ActComponentsRead:            {true, true, true},
		identity.ActComponentsWrite:           {true, true, false},
		identity.ActDataRead:                  {true, true, true},
		identity.ActDataWrite:                 {true, true, false},
		identity.ActModelsRead:                {true, true, true},
		identity.ActModelsWrite:               {true, true, false},
		identity.ActCodesRead:                 {true, true, true},
		identity.ActCodesWrite:                {true, true, false},
		identity.ActRegistriesRead:            {true, true, true},
		identity.ActRegistriesWrite:           {true, false, false},
		identity.ActDatastoresRead:            {true, true, true},
		identity.ActDatastoresWrite:           {true, true, false},
		identity.ActBatchEndpointsRead:        {true, true, true},
		identity.ActBatchEndpointsWrite:       {true, true, false},
		identity.ActBatchEndpointsInvoke:      {true, true, false},
		identity.ActSchedulesRead:             {true, true, true},
		identity.ActSchedulesWrite:            {true, true, false},
		identity.ActWebhooksRead:              {true, false, false},
		identity.ActWebhooksWrite:             {true, false, false},
		identity.ActQuotasRead:                {true, true, true},
		identity.ActQuotasWrite:               {true, false, false},
		identity.ActRolesRead:                 {true, true, true},
		identity.ActRolesWrite:                {true, false, false},
		identity.ActWorkspacesRead:            {true, true, true},
		identity.ActWorkspacesWrite:           {true, false, false},
		identity.ActAuditRead:                 {true, true, true},
	}

	roles := map[string]*identity.RoleDefinition{}
	for _, r := range identity.BuiltinRoles() {
		if !r.BuiltIn {
			t.Errorf("built-in role %s has BuiltIn unset", r.Name)
		}
		roles[r.Name] = r
	}
	for _, name := range []string{identity.RoleOwner, identity.RoleContributor, identity.RoleReader} {
		if roles[name] == nil {
			t.Fatalf("no built-in role %s", name)
		}
	}
	if len(roles) != 3 {
		t.Errorf("%d built-in roles, want 3 (update the matrix for a new one)", len(roles))
	}

	for _, action := range identity.WorkspaceActions {
		want, ok := matrix[action]
		if !ok {
			t.Errorf("action %s is in WorkspaceActions but not in the role matrix: decide what each built-in role grants", action)
			continue
		}
		for role, w := range map[string]bool{identity.RoleOwner: want.owner, identity.RoleContributor: want.contributor, identity.RoleReader: want.reader} {
			if got := roles[role].Allows(action); got != w {
				t.Errorf("%s.Allows(%s) = %v, want %v", role, action, got, w)
			}
		}
		// Reader grants exactly the read actions, but webhooks' (Owners'
		// alone: a webhook's URL may carry its receiver's secret).
		if isRead := strings.HasSuffix(action, "/read") && action != identity.ActWebhooksRead; isRead != want.reader {
			t.Errorf("matrix row %s: reader %v but the action is a read: %v", action, want.reader, isRead)
		}
	}
	for action := range matrix {
		if !slices.Contains(identity.WorkspaceActions, action) {
			t.Errorf("matrix row %s is not in WorkspaceActions", action)
		}
	}

	// Server-scoped actions are never granted by a workspace role except
	// Owner's "*", and the server refuses them to non-admins anyway; the
	// read-only role must not reach any write.
	for _, a := range []string{identity.ActUsersWrite, identity.ActIdentitiesWrite, identity.ActTokensWrite} {
		if roles[identity.RoleReader].Allows(a) {
			t.Errorf("Reader allows server action %s", a)
		}
	}
}

// custom returns an (unvalidated) custom role.
func custom(actions []string, notActions ...string) *identity.RoleDefinition {
	return &identity.RoleDefinition{Name: "custom", Actions: actions, NotActions: notActions}
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
			allow:   identity.WorkspaceActions,
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
			deny: identity.WorkspaceActions,
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
	ok := &identity.RoleDefinition{Name: "compute-operator", Actions: []string{"computes/*", "*/read"}, NotActions: []string{"computes/delete"}}
	if err := identity.ValidateRoleDefinition(ok); err != nil {
		t.Fatalf("valid role refused: %v", err)
	}
	cases := []struct {
		name  string
		role  *identity.RoleDefinition
		field string
		msg   string
	}{
		{"built-in name", &identity.RoleDefinition{Name: "Owner", Actions: []string{"*"}}, "name", "built-in"},
		{"built-in name in another case", &identity.RoleDefinition{Name: "reader", Actions: []string{"*/read"}}, "name", "built-in"},
		{"contributor", &identity.RoleDefinition{Name: "CONTRIBUTOR", Actions: []string{"jobs/read"}}, "name", "built-in"},
		{"no actions", &identity.RoleDefinition{Name: "empty"}, "actions", "at least one"},
		{"empty action list", &identity.RoleDefinition{Name: "empty", Actions: []string{}, NotActions: []string{"jobs/read"}}, "actions", "at least one"},
		{"unknown action", &identity.RoleDefinition{Name: "odd", Actions: []string{"foo/bar"}}, "actions", "foo/bar"},
		{"unknown among known", &identity.RoleDefinition{Name: "odd", Actions: []string{"jobs/read", "jobs/fly/action"}}, "actions", "jobs/fly/action"},
		{"unknown not-action", &identity.RoleDefinition{Name: "odd", Actions: []string{"*"}, NotActions: []string{"foo/bar"}}, "actions", "foo/bar"},
		{"server action", &identity.RoleDefinition{Name: "odd", Actions: []string{"users/write"}}, "actions", "users/write"},
		{"bad name", &identity.RoleDefinition{Name: "../x", Actions: []string{"jobs/read"}}, "name", ""},
		{"empty name", &identity.RoleDefinition{Name: "", Actions: []string{"jobs/read"}}, "name", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := identity.ValidateRoleDefinition(c.role)
			if err == nil {
				t.Fatalf("%+v accepted", c.role)
			}
			if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != c.field {
				t.Fatalf("error %v: code %s field %q, want %s field %q", err, core.ErrorCode(err), core.ErrorField(err), core.EINVALID, c.field)
			}
			if !strings.Contains(core.ErrorMessage(err), c.msg) {
				t.Errorf("error %q does not mention %q", core.ErrorMessage(err), c.msg)
			}
		})
	}
}
