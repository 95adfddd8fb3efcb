package computes

import (
	"github.com/shoal-ml/shoal/decide/instance/idle"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/store"
)

// onIdleMinutesChanged applies Azure's reset rule when the idle setting
// changes: a new setting shorter than the time already idle starts the
// idle clock again.
func (s *Service) onIdleMinutesChanged(tx store.Tx, st *compute.InstanceStatus, newMin int) {
	if st.IdleSince == nil {
		return
	}
	prev := idle.State{IdleSince: *st.IdleSince}
	next := idle.OnMinutesChanged(prev, newMin, s.cfg.IdleMinute, tx.Now())
	if !next.IdleSince.Equal(prev.IdleSince) {
		t := next.IdleSince
		st.IdleSince, st.ShutdownWarnedAt = &t, nil
	}
}
