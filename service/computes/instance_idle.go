package computes

import (
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
)

// IdleWriteEvery bounds how often an instance's idle bookkeeping alone is
// written.
const IdleWriteEvery = 15 * time.Second

// IdleFields are the parts of an instance's state that change on every
// pass while it is used.
type IdleFields struct {
	IdleSince        *time.Time `json:"idle_since,omitempty"`
	ShutdownWarnedAt *time.Time `json:"shutdown_warned_at,omitempty"`
	Activity         []string   `json:"activity,omitempty"`
	SchedulesChecked *time.Time `json:"schedules_checked_at,omitempty"`
	Active           bool       `json:"active,omitempty"`
}

// IdlePart is the idle bookkeeping of st, compared to decide whether a
// pass changed more than it.
func IdlePart(st compute.InstanceStatus) IdleFields {
	return IdleFields{st.IdleSince, st.ShutdownWarnedAt, st.Activity, st.SchedulesCheckedAt, st.IdleActive}
}

// WithoutIdle is st without its idle bookkeeping.
func WithoutIdle(st compute.InstanceStatus) compute.InstanceStatus {
	st.IdleSince, st.ShutdownWarnedAt, st.Activity, st.SchedulesCheckedAt, st.IdleActive = nil, nil, nil, nil, false
	return st
}
