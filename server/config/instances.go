package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/shoal-ml/shoal/decide/schedule"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// InstancesConfig is what the server imposes on compute instances — the
// policy an Azure administrator sets with Azure Policy — and how their
// idle time is counted.
type InstancesConfig struct {
	// DefaultSchedules are added to every instance created without
	// schedules, e.g. stop at 22:00 Pacific (keys as in the instance YAML:
	// {compute_start_stop: [...]}).
	DefaultSchedules any `yaml:"default_schedules"`
	// DefaultIdleTimeBeforeShutdownMinutes is set on instances created
	// without idle shutdown (0: none).
	DefaultIdleTimeBeforeShutdownMinutes int `yaml:"default_idle_time_before_shutdown_minutes"`
	// MaxIdleTimeBeforeShutdownMinutes caps the idle time (0: no cap).
	MaxIdleTimeBeforeShutdownMinutes int `yaml:"max_idle_time_before_shutdown_minutes"`
	// IdleMinute is how long one minute of idle time lasts: 1m. Shorten
	// it only to rehearse idle shutdown (e.g. 1s makes a 15-minute idle
	// shutdown happen after 15 s).
	IdleMinute Duration `yaml:"idle_minute"`
}

// InstancePolicy checks the instances section and returns the policy and
// the length of an idle minute.
func (c *Config) InstancePolicy() (*compute.ComputeSchedules, int, int, time.Duration, error) {
	ic := c.Instances
	var sc *compute.ComputeSchedules
	if ic.DefaultSchedules != nil {
		raw, err := json.Marshal(ic.DefaultSchedules)
		if err != nil {
			return nil, 0, 0, 0, fmt.Errorf("instances.default_schedules: %w", err)
		}
		sc = &compute.ComputeSchedules{}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(sc); err != nil {
			return nil, 0, 0, 0, fmt.Errorf("instances.default_schedules: %v", err)
		}
		if err := compute.NormalizeSchedules(sc); err != nil {
			return nil, 0, 0, 0, fmt.Errorf("instances.default_%s", core.ErrorMessage(err))
		}
		if err := schedule.Validate(sc); err != nil {
			return nil, 0, 0, 0, fmt.Errorf("instances.default_%s", core.ErrorMessage(err))
		}
	}
	for _, m := range []struct {
		name string
		v    int
	}{{"default_idle_time_before_shutdown_minutes", ic.DefaultIdleTimeBeforeShutdownMinutes}, {"max_idle_time_before_shutdown_minutes", ic.MaxIdleTimeBeforeShutdownMinutes}} {
		if m.v != 0 {
			if err := compute.ValidateIdleShutdownMinutes(m.v); err != nil {
				return nil, 0, 0, 0, fmt.Errorf("instances.%s: must be between %d and %d minutes, got %d", m.name, compute.MinIdleShutdownMinutes, compute.MaxIdleShutdownMinutes, m.v)
			}
		}
	}
	if d, mx := ic.DefaultIdleTimeBeforeShutdownMinutes, ic.MaxIdleTimeBeforeShutdownMinutes; d > 0 && mx > 0 && d > mx {
		return nil, 0, 0, 0, fmt.Errorf("instances.default_idle_time_before_shutdown_minutes %d is above max_idle_time_before_shutdown_minutes %d", d, mx)
	}
	return sc, ic.DefaultIdleTimeBeforeShutdownMinutes, ic.MaxIdleTimeBeforeShutdownMinutes, time.Duration(ic.IdleMinute), nil
}
