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
