package idle

import "github.com/shoal-ml/shoal/domain/compute"

// MinMinutes and MaxMinutes bound idle_time_before_shutdown_minutes: 15
// minutes to 3 days, as on Azure. They are the domain's constants, so the
// API's validation and this package cannot disagree.
const (
	MinMinutes = compute.MinIdleShutdownMinutes
	MaxMinutes = compute.MaxIdleShutdownMinutes
)

// ValidateMinutes checks idle_time_before_shutdown_minutes and returns an
// EINVALID *shoal.Error naming the field and the 15–4320 range. 0 (off)
// is not a value of the field but its absence, so it is refused here.
func ValidateMinutes(m int) error { return compute.ValidateIdleShutdownMinutes(m) }
