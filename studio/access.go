package studio

import "github.com/shoal-ml/shoal"

// allow checks that the viewer may do action in the page's workspace,
// as the API's route would (the studio reads through the services).
func (s *Studio) allow(q *req, action string) error {
	return s.cfg.Svc.Authorize(q.ctx, q.p, q.workspace, action)
}

// can reports whether the viewer may do action: pages hide what the API
// would refuse (and the API refuses it anyway).
func (s *Studio) can(q *req, action string) bool { return s.allow(q, action) == nil }

// isOwner reports whether the viewer is the instance's user: its
// interactive actions are theirs alone. The stored state holds the user's
// principal ID ("user:alice"); the read-only assigned_user field shows
// the name ("alice"), so it is the stored one that is compared, as the
// API's check does.
func isOwner(q *req, c *shoal.Compute) bool {
	id := c.AssignedUser
	if c.Instance != nil {
		id = c.Instance.AssignedUser
	}
	return id != "" && id == q.p.ID
}
