package computes

import (
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
)

// RememberIdle keeps an instance's idle bookkeeping in memory between
// writes.
func (s *Service) RememberIdle(key string, st compute.InstanceStatus) {
	s.instances.rememberIdle(key, st)
}

// OverlayIdle puts the idle bookkeeping kept in memory on comp.
func (s *Service) OverlayIdle(comp *compute.Compute) { s.instances.overlayIdle(comp) }

// IdleWriteDue reports whether an instance's idle bookkeeping alone is due
// to be written at now.
func (s *Service) IdleWriteDue(key string, now time.Time) bool {
	return s.instances.idleWriteDue(key, now)
}

// IdleWritten notes that an instance's idle bookkeeping was written at now.
func (s *Service) IdleWritten(key string, now time.Time) { s.instances.idleWritten(key, now) }
