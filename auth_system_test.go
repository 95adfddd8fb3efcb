package shoal_test

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal"
)

// The server's own principal is the one the control loops built inline
// before: ID and kind "system", named after the loop, which events show.
func TestSystemPrincipal(t *testing.T) {
	p := shoal.SystemPrincipal("scheduler")
	if p.ID != "system" || shoal.PrincipalSystem != "system" || p.Kind != shoal.PrincipalSystem || p.Name != "scheduler" || p.Admin {
		t.Fatalf("SystemPrincipal(scheduler) = %+v", p)
	}
	if got := shoal.ActorName(shoal.WithPrincipal(context.Background(), p)); got != "scheduler" {
		t.Fatalf("actor %q, want scheduler", got)
	}
	if shoal.SystemPrincipal("a") == shoal.SystemPrincipal("a") {
		t.Fatal("each call must return its own principal: callers may not share one by accident")
	}
}
