package studio

import (
	"github.com/shoal-ml/shoal/api"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/identity"
)

// Actions of the administrators' pages: the ones the API's routes for the
// same data declare (GET /api/v1/audit and GET /api/v1/users), checked
// against the route table by TestStudioPagesUseTheRoutesActions.
const (
	auditPageAction = identity.ActUsersRead
	usersPageAction = identity.ActUsersRead
)

// allow checks that the viewer may do action in the page's workspace
// through api.Allow, the decision the API's routes make: a permission
// changed there changes what the studio offers too.
func (s *Studio) allow(q *req, action string) error {
	return api.Allow(q.ctx, s.cfg.Svc, q.p, action, q.workspace, "")
}

// allowServer checks an action that is about no workspace, as the API's
// routes without {ws} do (administrators' pages).
func (s *Studio) allowServer(q *req, action string) error {
	return api.Allow(q.ctx, s.cfg.Svc, q.p, action, "", "")
}

// can reports whether the viewer may do action: pages hide what the API
// would refuse (and the API refuses it anyway).
func (s *Studio) can(q *req, action string) bool { return s.allow(q, action) == nil }

// isOwner reports whether the viewer is the instance's user, by the
// services' own check (the one the API's interactive operations make):
// its interactive actions are theirs alone.
func (s *Studio) isOwner(q *req, c *compute.Compute) bool {
	return s.cfg.Svc.CheckInstanceUser(q.ctx, c) == nil
}
