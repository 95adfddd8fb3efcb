package studio

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/shoal-ml/shoal/api"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/service"
)

// TestStudioPagesUseTheRoutesActions pins the administrators' pages to
// the actions the API's routes for the same data declare: a change of
// permission in the route table shows here as a failure, not as a studio
// that offers what the API refuses.
func TestStudioPagesUseTheRoutesActions(t *testing.T) {
	want := map[string]string{"GET /api/v1/audit": auditPageAction, "GET /api/v1/users": usersPageAction,
		"GET /api/v1/workspaces/{ws}/batch-endpoints":                batchPageAction,
		"GET /api/v1/workspaces/{ws}/batch-endpoints/{name}":         batchPageAction,
		"POST /api/v1/workspaces/{ws}/batch-endpoints/{name}/invoke": batchInvokeAction,
		"GET /api/v1/workspaces/{ws}/schedules":                      schedulePageAction,
		"GET /api/v1/workspaces/{ws}/schedules/{name}":               schedulePageAction,
		"POST /api/v1/workspaces/{ws}/schedules/{name}/enable":       scheduleWriteAction,
		"POST /api/v1/workspaces/{ws}/schedules/{name}/disable":      scheduleWriteAction,
		"POST /api/v1/workspaces/{ws}/schedules/{name}/trigger":      scheduleWriteAction}
	for _, r := range api.NewServer(service.New(service.Config{}), nil).Routes() {
		if a, ok := want[r.Pattern]; ok {
			if r.Action != a {
				t.Errorf("%s declares %q; the studio's page checks %q", r.Pattern, r.Action, a)
			}
			delete(want, r.Pattern)
		}
	}
	for p := range want {
		t.Errorf("no route %s in the API's table", p)
	}
}

// TestStudioInstanceUserIsTheServicesCheck: the instance page offers its
// interactive use (SSH, application links, postponing, single sign-on) to
// exactly those the services let use it. The studio once compared the
// viewer's own ID, so a workload acting for the instance's user was
// refused there but allowed by the API.
func TestStudioInstanceUserIsTheServicesCheck(t *testing.T) {
	svc := service.New(service.Config{})
	s := &Studio{cfg: Config{Svc: svc}}
	c := &compute.Compute{Workspace: "default", Instance: &compute.InstanceStatus{AssignedUser: "user:alice"}}
	for _, tc := range []struct {
		what string
		p    *identity.Principal
		want bool
	}{
		{"the instance's user", &identity.Principal{ID: "user:alice", Name: "alice", Kind: identity.PrincipalUser}, true},
		{"a workload acting for the user", &identity.Principal{ID: "identity:job-1", Name: "job-1", Kind: identity.PrincipalIdentity, OnBehalfOf: "user:alice"}, true},
		{"another user", &identity.Principal{ID: "user:bob", Name: "bob", Kind: identity.PrincipalUser}, false},
		{"an administrator", &identity.Principal{ID: "admin", Name: "admin", Kind: identity.PrincipalUser, Admin: true}, false},
	} {
		ctx := identity.WithPrincipal(context.Background(), tc.p)
		q := &req{w: httptest.NewRecorder(), ctx: ctx, p: tc.p, workspace: "default"}
		byService := svc.CheckInstanceUser(ctx, c) == nil
		if got := s.isOwner(q, c); got != tc.want || got != byService {
			t.Errorf("%s: the studio says owner=%v, the services %v, want %v", tc.what, got, byService, tc.want)
		}
	}
}
