package idle

import "time"

// Kernel is a Jupyter kernel as Jupyter's GET /api/kernels lists it. The
// JSON tags are Jupyter's, so a listing decodes into it directly.
type Kernel struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// ExecutionState is "busy", "idle", "starting", "restarting", "dead"
	// …; only "busy" is ongoing activity.
	ExecutionState string    `json:"execution_state"`
	LastActivity   time.Time `json:"last_activity"`
	// Connections is the number of open websockets; it does not count as
	// activity (see the package documentation).
	Connections int `json:"connections"`
}

// Terminal is a Jupyter terminal as GET /api/terminals lists it.
type Terminal struct {
	Name         string    `json:"name"`
	LastActivity time.Time `json:"last_activity"`
}

// Signals is what the agent and the server observe of an instance at the
// time of an evaluation. Zero times mean "never" or "unknown".
type Signals struct {
	Kernels   []Kernel
	Terminals []Terminal
	// RunningJobs names the jobs running on the instance.
	RunningJobs []string
	// SSHSessions is the number of open SSH sessions (VS Code included);
	// SSHLastActivity is the last traffic on any of them.
	SSHSessions     int
	SSHLastActivity time.Time
	// ProxyLastRequest is the last request through the server's
	// application proxy to the instance.
	ProxyLastRequest time.Time
	// CustomAppsRunning names the custom applications whose process runs.
	CustomAppsRunning []string
	// CPUPercent is the instance's CPU use, in percent of its CPUs; it is
	// meaningful only when CPUKnown.
	CPUPercent float64
	CPUKnown   bool
}
