package schedule

import "time"

// MaxScaleWindows bounds a cluster's scale_windows: enough for nights,
// weekends and a few exceptions, few enough that every pass can evaluate
// them all.
const MaxScaleWindows = 16

// ScaleWindow is one entry of a cluster's `scale_windows` (a Shoal key
// beside Azure's cluster YAML): from each firing of Trigger until the
// next firing of any window of the cluster, the cluster's effective
// min_instances and max_instances are this window's. An entry with
// neither bound is "back to normal": the cluster's own min/max apply.
type ScaleWindow struct {
	// Name names the window in events, reasons and `compute show`
	// (unique in the cluster, compared case-insensitively).
	Name string `json:"name"`
	// Trigger says when the window begins (cron or recurrence).
	Trigger *Trigger `json:"trigger"`
	// MinInstances and MaxInstances, when set, replace the cluster's own
	// while the window is the last one to have begun; one left out keeps
	// the cluster's (a max below the cluster's min lowers the min too).
	MinInstances *int `json:"min_instances,omitempty"`
	MaxInstances *int `json:"max_instances,omitempty"`
}

// ScaleWindowState is a cluster's effective scale bounds (read-only
// `scale_window` of `compute show`): the window that began last, since
// when, the bounds in force, and when they change next. The scaling loop
// stores the part without NextChange when a window begins, so that a
// change is told (EventScaleWindow) once, across restarts; reads fill in
// the rest at the clock's now.
type ScaleWindowState struct {
	// Window is the name of the window in force, "" for none (the
	// cluster's own bounds).
	Window string `json:"window,omitempty"`
	// Since is when it began (zero for none).
	Since *time.Time `json:"since,omitempty"`
	// MinInstances and MaxInstances are the effective bounds.
	MinInstances int `json:"min_instances"`
	MaxInstances int `json:"max_instances"`
	// NextChange is when another window begins next, and NextWindow its
	// name (read only: never stored).
	NextChange *time.Time `json:"next_change,omitempty"`
	NextWindow string     `json:"next_window,omitempty"`
}
