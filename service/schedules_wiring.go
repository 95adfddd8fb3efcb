package service

import (
	"github.com/shoal-ml/shoal/service/batchendpoints"
	"github.com/shoal-ml/shoal/service/schedules"
)

// Schedules is the job schedules' service over these services: jobs
// submitted and checked by them, batch endpoints invoked through
// service/batchendpoints, the last writer's rights checked by their
// authorizer. It holds no state of its own.
func (s *Services) Schedules() *schedules.Service {
	return schedules.New(schedules.Config{
		Store:      s.store,
		Jobs:       s,
		Batch:      batchendpoints.New(batchendpoints.Config{Store: s.store, Jobs: s, Artifacts: s.cfg.Files}),
		Authorizer: s,
	})
}
