package httpx

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
)

// A job acting as its submitter (identity: user_identity) is the user's
// principal bound to an attempt: it may not act on the user's account
// (tokens, profile), which would outlive the job; the user may.
func TestJobActingAsItsUserMayNotActOnTheAccount(t *testing.T) {
	user := &identity.Principal{ID: "user:bob", Name: "bob", Kind: identity.PrincipalUser}
	if err := Allow(context.Background(), nil, user, ActionSelfOrAdmin, "", "bob"); err != nil {
		t.Fatalf("bob on his own account: %v", err)
	}
	job := *user
	job.AttemptID = "att-1"
	if err := Allow(context.Background(), nil, &job, ActionSelfOrAdmin, "", "bob"); core.ErrorCode(err) != core.EFORBIDDEN {
		t.Fatalf("bob's job on bob's account: %v, want EFORBIDDEN", err)
	}
}

// A job acting as its submitter acts in its job's workspace only, and
// grants no roles nor takes credentials that outlive the job (datastore
// secrets, SAS of uploads), even where its submitter may: the authorizer
// is never asked.
func TestJobActingAsItsUserStaysInItsWorkspace(t *testing.T) {
	job := &identity.Principal{ID: "user:bob", Name: "bob (job j)", Kind: identity.PrincipalUser, AttemptID: "att-1", Workspace: "team"}
	for _, c := range []struct{ action, ws string }{
		{identity.ActJobsRead, "other"},
		{identity.ActRolesWrite, "team"},
		{identity.ActDatastoresWrite, "team"},
		{identity.ActCodesWrite, "team"},
		{identity.ActWorkspacesWrite, "team"},
		{identity.ActRegistriesWrite, "team"},
		{identity.ActIdentitiesWrite, "team"},
		{identity.ActComputesJoinNode, "team"},
	} {
		if err := Allow(context.Background(), nil, job, c.action, c.ws, ""); core.ErrorCode(err) != core.EFORBIDDEN {
			t.Errorf("%s in %s: %v, want EFORBIDDEN", c.action, c.ws, err)
		}
	}
}
