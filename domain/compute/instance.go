package compute

import (
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
)

// Compute instance states: Azure's ComputeInstanceState values.
const (
	InstanceCreating     = "Creating"
	InstanceCreateFailed = "CreateFailed"
	InstanceSettingUp    = "SettingUp"
	InstanceSetupFailed  = "SetupFailed"
	InstanceRunning      = "Running"
	InstanceJobRunning   = "JobRunning"
	InstanceStopping     = "Stopping"
	InstanceStopped      = "Stopped"
	InstanceStarting     = "Starting"
	InstanceRestarting   = "Restarting"
	InstanceDeleting     = "Deleting"
	InstanceUnusable     = "Unusable"
	InstanceUnknown      = "Unknown"
)

// Instance operations (last_operation.operation_name), their statuses and
// what triggered them, as Azure names them.
const (
	OperationCreate  = "Create"
	OperationStart   = "Start"
	OperationStop    = "Stop"
	OperationRestart = "Restart"
	OperationDelete  = "Delete"

	OperationInProgress    = "InProgress"
	OperationSucceeded     = "Succeeded"
	OperationCreateFailed  = "CreateFailed"
	OperationStartFailed   = "StartFailed"
	OperationStopFailed    = "StopFailed"
	OperationRestartFailed = "RestartFailed"

	TriggerUser         = "User"
	TriggerSchedule     = "Schedule"
	TriggerIdleShutdown = "IdleShutdown"
)

// Instance defaults and bounds.
const (
	// InstanceAdminUsername is the login of every instance, as on Azure.
	InstanceAdminUsername = "azureuser"
	// MinIdleShutdownMinutes and MaxIdleShutdownMinutes bound
	// idle_time_before_shutdown_minutes: 15 minutes to 3 days.
	MinIdleShutdownMinutes = 15
	MaxIdleShutdownMinutes = 4320
	// DefaultSetupScriptTimeoutMinutes bounds a setup script with no
	// timeout_minutes.
	DefaultSetupScriptTimeoutMinutes = 30
	// MaxCustomApplications bounds custom_applications.
	MaxCustomApplications = 10
	// JupyterApplication is the name of the built-in notebook application.
	JupyterApplication = "jupyter"
)

// CreateOnBehalfOf names the user an instance is created for (the
// assigned user). On Shoal the object ID is the user's name.
type CreateOnBehalfOf struct {
	UserTenantID string `json:"user_tenant_id,omitempty"`
	UserObjectID string `json:"user_object_id"`
}

// SetupScripts are the instance's setup scripts: creation_script runs once
// when the instance is created, startup_script at every start.
type SetupScripts struct {
	CreationScript *SetupScript `json:"creation_script,omitempty"`
	StartupScript  *SetupScript `json:"startup_script,omitempty"`
}

// SetupScript is a script file (Path, relative to the instance's home) or
// an inline Command, run as the instance user in its home.
type SetupScript struct {
	Path           string `json:"path,omitempty"`
	Command        string `json:"command,omitempty"`
	TimeoutMinutes *int   `json:"timeout_minutes,omitempty"`
}

// CustomApplication is an application the instance serves, reached through
// the server's authenticated proxy. With Image (Azure's shape) it runs as
// a container of its own beside the instance, on a host with a container
// runtime; Command (a Shoal extension) alone runs it as the instance
// user's process on the host, and with Image it replaces the image's
// command.
type CustomApplication struct {
	Name                 string            `json:"name"`
	Type                 string            `json:"type,omitempty"`
	Image                *CustomAppImage   `json:"image,omitempty"`
	Command              string            `json:"command,omitempty"`
	Endpoints            []*AppEndpoint    `json:"endpoints,omitempty"`
	EnvironmentVariables map[string]string `json:"environment_variables,omitempty"`
	BindMounts           []*BindMount      `json:"bind_mounts,omitempty"`
}

// CustomAppImage is a custom application's container image.
type CustomAppImage struct {
	Type      string `json:"type,omitempty"`
	Reference string `json:"reference"`
}

// AppEndpoint maps the port the application listens on (Target) to the
// port it is published on (Published).
type AppEndpoint struct {
	Name      string `json:"name,omitempty"`
	Protocol  string `json:"protocol,omitempty"`
	Target    int    `json:"target"`
	Published int    `json:"published,omitempty"`
}

// BindMount makes Source (a path on the instance's host: inside the
// instance's home, /home/azureuser/..., or under a path the location
// allows) visible at Target inside the application's container.
type BindMount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

// LastOperation is an instance's most recent operation.
type LastOperation struct {
	OperationName    string    `json:"operation_name"`
	OperationTime    time.Time `json:"operation_time"`
	OperationStatus  string    `json:"operation_status"`
	OperationTrigger string    `json:"operation_trigger"`
}

// IdleState is what `show` reports of an instance's idleness: since when
// it is idle, for how long, and what counts as activity right now.
type IdleState struct {
	IdleSince   *time.Time `json:"idle_since,omitempty"`
	IdleMinutes int        `json:"idle_minutes"`
	Activity    []string   `json:"activity"`
	// ShutdownAt is when idle shutdown will stop the instance if nothing
	// happens; ShutdownPostponedUntil when the owner postponed it.
	ShutdownAt             *time.Time `json:"shutdown_at,omitempty"`
	ShutdownPostponedUntil *time.Time `json:"shutdown_postponed_until,omitempty"`
}

// InstanceApplication is an application the instance serves, with the URL
// of the server's proxy to it.
type InstanceApplication struct {
	DisplayName string `json:"display_name"`
	EndpointURI string `json:"endpoint_uri"`
	// Running and Ready say whether its process runs and answers.
	Running bool `json:"running"`
	Ready   bool `json:"ready"`
	// Error says why the application does not run, when it does not.
	Error string `json:"error,omitempty"`
}

// InstanceStatus is what the server keeps about an instance beyond its
// spec: its state machine, owner and the facts its agent reports. It is
// stored with the compute and never returned as such (it holds the
// notebook's secret); Compute's read-only fields show what users see.
type InstanceStatus struct {
	State         string         `json:"state"`
	LastOperation *LastOperation `json:"last_operation,omitempty"`
	// Pending is what the lifecycle controller must do next ("start" or
	// "stop"), for PendingOperation (Create, Start, Stop, Restart: a
	// restart is a stop, then a start) triggered by PendingTrigger.
	Pending          string `json:"pending,omitempty"`
	PendingOperation string `json:"pending_operation,omitempty"`
	PendingTrigger   string `json:"pending_trigger,omitempty"`
	// AssignedUser is the user the instance belongs to.
	AssignedUser string `json:"assigned_user"`
	// SSOEnabled: an instance created on behalf of someone with a setup
	// script or custom application starts with SSO disabled until the
	// assigned user enables it.
	SSOEnabled bool `json:"sso_enabled"`
	// CreationScriptDone is set once the creation script ran (it runs once).
	CreationScriptDone bool `json:"creation_script_done"`
	// SetupError says why setup failed (SetupFailed).
	SetupError string `json:"setup_error,omitempty"`
	// Idle clock and shutdown warning (see instance/idle).
	IdleSince              *time.Time `json:"idle_since,omitempty"`
	IdleActive             bool       `json:"idle_active,omitempty"`
	ShutdownWarnedAt       *time.Time `json:"shutdown_warned_at,omitempty"`
	ShutdownPostponedUntil *time.Time `json:"shutdown_postponed_until,omitempty"`
	// SchedulesCheckedAt is when schedules were last evaluated: a firing
	// missed while the server was down runs once at start-up.
	SchedulesCheckedAt *time.Time `json:"schedules_checked_at,omitempty"`
	// NotebookToken is the secret the server's proxy presents to the
	// instance's Jupyter server.
	NotebookToken string `json:"notebook_token,omitempty"`
	// Reported by the agent.
	SSHPort            int                 `json:"ssh_port,omitempty"`
	SSHHost            string              `json:"ssh_host,omitempty"`
	HostKeyFingerprint string              `json:"host_key_fingerprint,omitempty"`
	HostKey            string              `json:"host_key,omitempty"`
	Apps               []InstanceAppReport `json:"apps,omitempty"`
	Activity           []string            `json:"activity,omitempty"`
}

// InstanceAppReport is an application as the agent reports it: where it
// listens and whether it runs.
type InstanceAppReport struct {
	Name    string `json:"name"`
	Addr    string `json:"addr"`
	Running bool   `json:"running"`
	Ready   bool   `json:"ready"`
	// ListenerOwner is whose process must hold the listener at Addr: the
	// instance user's account, the container of an application with an
	// image, and the network namespace Addr is in (an instance in a
	// virtual network: its container has a network of its own).
	core.ListenerOwner
	// Error says why the application does not run (its image cannot be
	// pulled, a bind mount is refused), until it runs.
	Error string `json:"error,omitempty"`
}

// InstanceNodeID is the ID of an instance's own node. It is stable, so
// the node's work dir — the instance's home — survives stop and start.
func InstanceNodeID(c *Compute, loc *catalog.Location) string {
	return fmt.Sprintf("ci-%s-%s", strings.ToLower(loc.Name), strings.ToLower(c.Name))
}

const // IsolationContainer: the instance is a container of its own, its
// root not the host's.
IsolationContainer = "container"

const // IsolationHostProcesses: the instance is processes on the host,
// run as its user's account, without root.
IsolationHostProcesses = "host-processes"
