package identity_test

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal/domain/identity"
)

// The server's own principal is the one the control loops built inline
// before: ID and kind "system", named after the loop, which events show.
func TestSystemPrincipal(t *testing.T) {
	p := identity.SystemPrincipal("scheduler")
	if p.ID != "system" || identity.PrincipalSystem != "system" || p.Kind != identity.PrincipalSystem || p.Name != "scheduler" || p.Admin {
		t.Fatalf("SystemPrincipal(scheduler) = %+v", p)
	}
	if got := identity.ActorName(identity.WithPrincipal(context.Background(), p)); got != "scheduler" {
		t.Fatalf("actor %q, want scheduler", got)
	}
	if identity.SystemPrincipal("a") == identity.SystemPrincipal("a") {
		t.Fatal("each call must return its own principal: callers may not share one by accident")
	}
}
