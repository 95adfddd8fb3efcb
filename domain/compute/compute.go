package compute

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/schedule"
)

// Compute types, as the YAML `type` key spells them (case-insensitive on input).
const (
	ComputeTypeCluster  = "amlcompute"
	ComputeTypeInstance = "computeinstance"
	// ComputeTypeKubernetes is Azure's attached Kubernetes compute: a
	// cluster whose nodes are pods of a kubernetes location.
	ComputeTypeKubernetes = "kubernetes"
)

// VM priority tiers, in the canonical spelling `az ml` prints.
const (
	TierDedicated   = "dedicated"
	TierLowPriority = "low_priority"
)

// Provisioning states of a compute (Azure's provisioningState values).
const (
	ProvisioningCreating  = "Creating"
	ProvisioningUpdating  = "Updating"
	ProvisioningDeleting  = "Deleting"
	ProvisioningSucceeded = "Succeeded"
	ProvisioningFailed    = "Failed"
	ProvisioningCanceled  = "Canceled"
)

// Allocation states of a cluster.
const (
	AllocationSteady   = "steady"
	AllocationResizing = "resizing"
)

// Defaults applied to a cluster spec when the key is absent, as in `az ml`.
const (
	DefaultClusterSize             = catalog.DefaultCPUSize
	DefaultMinInstances            = 0
	DefaultMaxInstances            = 1
	DefaultIdleTimeBeforeScaleDown = 120
	// IdlePolicyAdaptive is the idle policy that chooses each idle node's
	// timeout from the cluster's recent arrivals.
	IdlePolicyAdaptive = "adaptive"
)

// ComputeSpec is what a user writes: the keys of an `az ml` compute YAML
// file, snake_case in JSON and YAML alike. Pointers distinguish "absent"
// from a zero value so that defaults and partial updates are exact.
type ComputeSpec struct {
	Name                    string            `json:"name"`
	Type                    string            `json:"type"`
	Description             string            `json:"description,omitempty"`
	Tags                    map[string]string `json:"tags,omitempty"`
	Size                    string            `json:"size,omitempty"`
	Location                string            `json:"location,omitempty"`
	Tier                    string            `json:"tier,omitempty"`
	MinInstances            *int              `json:"min_instances,omitempty"`
	MaxInstances            *int              `json:"max_instances,omitempty"`
	IdleTimeBeforeScaleDown *int              `json:"idle_time_before_scale_down,omitempty"`
	// IdlePolicy is IdlePolicyAdaptive when the YAML says
	// idle_time_before_scale_down: adaptive (a Shoal extension): the
	// autoscaler chooses each idle node's timeout from recent arrivals,
	// IdleTimeBeforeScaleDown being its fallback; "" is the fixed number.
	IdlePolicy string `json:"idle_policy,omitempty"`
	// TierFallback (a Shoal extension, low-priority clusters): a job that
	// waited After for low-priority capacity gets dedicated nodes.
	TierFallback *TierFallback `json:"tier_fallback,omitempty"`
	// WaitCostPerHour is what an hour of a waiting job is worth to the
	// adaptive policy (default 1.5 × the node's price).
	WaitCostPerHour        *float64         `json:"wait_cost_per_hour,omitempty"`
	SSHPublicAccessEnabled *bool            `json:"ssh_public_access_enabled,omitempty"`
	SSHSettings            *SSHSettings     `json:"ssh_settings,omitempty"`
	NetworkSettings        *NetworkSettings `json:"network_settings,omitempty"`
	EnableNodePublicIP     *bool            `json:"enable_node_public_ip,omitempty"`
	Identity               *IdentitySpec    `json:"identity,omitempty"`
	// PrepullImages (a Shoal extension; Azure has none) are images, or
	// environment references (azureml:<name>@latest), that every node of
	// the cluster pulls when it joins, before it takes work: scale-up
	// pays the pull then, not on the first job.
	PrepullImages []string `json:"prepull_images,omitempty"`
	// ScaleWindows (a Shoal extension; Azure has none) change the
	// cluster's min/max at times (nights, weekends): see
	// decide/scalewindow.
	ScaleWindows []*schedule.ScaleWindow `json:"scale_windows,omitempty"`
	// ScaleWindow (read-only) is the window in force: stored by the
	// scaling loop when one begins, refreshed when the cluster is read.
	ScaleWindow *schedule.ScaleWindowState `json:"scale_window,omitempty"`
	// KeepScaleWindows (never in JSON) is set by callers whose format has
	// no scale_windows (ARM: Azure has no such key): applying such a spec
	// keeps the cluster's windows instead of removing them.
	KeepScaleWindows bool `json:"-"`
	// Serverless marks a pool that Shoal created for serverless jobs
	// (ServerlessCompute); read-only: only the job service sets it. Such
	// a pool cannot be changed by users, and is deleted only while no
	// unfinished job uses it. `compute list` hides it unless asked.
	Serverless bool `json:"serverless,omitempty"`

	// Attached Kubernetes keys (type: kubernetes). ResourceID names the
	// kubernetes location (its name, or the resource_id its config
	// declares); Compute's own ResourceID, at a shallower depth, shadows
	// it in a Compute's JSON, and the status sets it to this value for
	// these computes, as `az ml compute show` prints it.
	ResourceID string `json:"resource_id,omitempty"`
	// Namespace is the pods' namespace: the location's.
	Namespace string `json:"namespace,omitempty"`
	// InstanceType (Shoal) is the instance type of the compute's nodes,
	// default the location's default instance type; Size repeats it.
	InstanceType string `json:"instance_type,omitempty"`

	// Compute instance keys (type: computeinstance).
	CreateOnBehalfOf              *CreateOnBehalfOf    `json:"create_on_behalf_of,omitempty"`
	IdleTimeBeforeShutdownMinutes *int                 `json:"idle_time_before_shutdown_minutes,omitempty"`
	Schedules                     *ComputeSchedules    `json:"schedules,omitempty"`
	SetupScripts                  *SetupScripts        `json:"setup_scripts,omitempty"`
	CustomApplications            []*CustomApplication `json:"custom_applications,omitempty"`
	EnableSSO                     *bool                `json:"enable_sso,omitempty"`
	EnableRootAccess              *bool                `json:"enable_root_access,omitempty"`
	ReleaseQuotaOnStop            *bool                `json:"release_quota_on_stop,omitempty"`
	EnableOSPatching              *bool                `json:"enable_os_patching,omitempty"`
	// Image (Shoal; Azure's instance has no such key, its OS image being
	// Microsoft's) is the container image this instance runs in instead
	// of its location's instance_image. It needs a location whose
	// instances are containers: elsewhere it is refused, never ignored.
	Image string `json:"image,omitempty"`
	// IdleCPUPercentBelow (Shoal): an instance whose CPU use is at or
	// above this percent is busy and not idle, even with nobody attached.
	IdleCPUPercentBelow *float64 `json:"idle_cpu_percent_below,omitempty"`
	// MaxConcurrentJobs (Shoal) bounds the jobs an instance runs at once;
	// default one per vCPU.
	MaxConcurrentJobs *int `json:"max_concurrent_jobs,omitempty"`
	// Stopped (Shoal, on create only) creates the instance stopped, as
	// Azure's studio does for instances created on behalf of others.
	Stopped bool `json:"stopped,omitempty"`
}

// SSHSettings are the admin account of a cluster's nodes. AdminPassword is
// write-only: the server keeps only AdminPasswordHash, a salted hash of
// it, and returns neither.
type SSHSettings struct {
	AdminUsername string `json:"admin_username,omitempty"`
	AdminPassword string `json:"admin_password,omitempty"`
	// AdminPasswordHash is the stored form of the admin password (see
	// HashAdminPassword); clients can neither send nor read it.
	AdminPasswordHash string `json:"admin_password_hash,omitempty"`
	SSHKeyValue       string `json:"ssh_key_value,omitempty"`
	// SSHPort is read-only: where an instance's SSH server listens.
	SSHPort int `json:"ssh_port,omitempty"`
	// HostKey is read-only: the instance's SSH host public key
	// (authorized_keys form), which clients pin (connect-ssh writes it
	// to a known_hosts file of its own) instead of trusting it on
	// first use. Public: it proves the server, it grants nothing.
	HostKey string `json:"host_key,omitempty"`
}

// NetworkSettings name the virtual network and subnet a compute joins.
type NetworkSettings struct {
	VnetName string `json:"vnet_name,omitempty"`
	Subnet   string `json:"subnet,omitempty"`
}

// Identity types, canonical spelling.
const (
	IdentityNone                  = "none"
	IdentitySystemAssigned        = "system_assigned"
	IdentityUserAssigned          = "user_assigned"
	IdentitySystemAndUserAssigned = "system_assigned,user_assigned"
)

// IdentitySpec is the managed identity of a compute: what its workloads act as.
type IdentitySpec struct {
	Type                   string                 `json:"type"`
	UserAssignedIdentities []UserAssignedIdentity `json:"user_assigned_identities,omitempty"`
	PrincipalID            string                 `json:"principal_id,omitempty"`
	TenantID               string                 `json:"tenant_id,omitempty"`
}

// UserAssignedIdentity names an identity an admin created.
type UserAssignedIdentity struct {
	ResourceID  string `json:"resource_id"`
	PrincipalID string `json:"principal_id,omitempty"`
	ClientID    string `json:"client_id,omitempty"`
}

// NodeStateCounts counts a cluster's nodes per Azure node state.
type NodeStateCounts struct {
	IdleNodeCount      int `json:"idle_node_count"`
	RunningNodeCount   int `json:"running_node_count"`
	PreparingNodeCount int `json:"preparing_node_count"`
	UnusableNodeCount  int `json:"unusable_node_count"`
	LeavingNodeCount   int `json:"leaving_node_count"`
	PreemptedNodeCount int `json:"preempted_node_count"`
}

// ProvisioningError explains why a compute is Failed.
type ProvisioningError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Compute is a stored compute resource: the spec with defaults applied, plus
// bookkeeping and the status the API computes when it is read.
type Compute struct {
	ComputeSpec

	// Workspace owns the compute; names are unique (case-insensitively) within it.
	Workspace string `json:"-"`
	// ID is the resource path, as Azure's `id`.
	ID string `json:"id"`
	// ResourceID repeats ID under the key `az ml` prints.
	ResourceID string `json:"resource_id"`
	// ETag changes on every write; send it back as If-Match to update safely.
	ETag string `json:"etag"`
	// Version is the integer behind ETag.
	Version int64 `json:"-"`

	ProvisioningState  string              `json:"provisioning_state"`
	ProvisioningErrors []ProvisioningError `json:"provisioning_errors"`
	CreatedOn          time.Time           `json:"created_on"`
	ModifiedOn         time.Time           `json:"modified_on"`
	CreatedBy          string              `json:"created_by,omitempty"`

	// Status computed from nodes on every read; never stored.
	AllocationState               string          `json:"allocation_state"`
	AllocationStateTransitionTime *time.Time      `json:"allocation_state_transition_time,omitempty"`
	CurrentNodeCount              int             `json:"current_node_count"`
	TargetNodeCount               int             `json:"target_node_count"`
	NodeStateCounts               NodeStateCounts `json:"node_state_counts"`

	// Instance is the stored state of a compute instance (nil for
	// clusters); never returned as such.
	Instance *InstanceStatus `json:"-"`
	// Read-only fields of an instance, computed when it is read.
	State         string         `json:"state,omitempty"`
	LastOperation *LastOperation `json:"last_operation,omitempty"`
	// Errors says why an instance's last create, start or setup failed
	// (Azure's ComputeInstance errors), while it stays failed.
	Errors       []ProvisioningError `json:"errors,omitempty"`
	AssignedUser string              `json:"assigned_user,omitempty"`
	// Isolation is how an instance runs (IsolationContainer or
	// IsolationHostProcesses): what it will be before its node runs,
	// what its node runs after.
	Isolation             string                 `json:"isolation,omitempty"`
	IdleState             *IdleState             `json:"idle_state,omitempty"`
	Applications          []InstanceApplication  `json:"applications,omitempty"`
	SSHConnectionString   string                 `json:"ssh_connection_string,omitempty"`
	ConnectivityEndpoints *ConnectivityEndpoints `json:"connectivity_endpoints,omitempty"`
}

// ConnectivityEndpoints are where an instance is reached.
type ConnectivityEndpoints struct {
	PublicIPAddress  string `json:"public_ip_address"`
	PrivateIPAddress string `json:"private_ip_address"`
}

// IsInstance reports whether c is a compute instance.
func (c *Compute) IsInstance() bool { return c.Type == ComputeTypeInstance }

// Redacted returns a copy of c that is safe to return to a client: secrets
// (the admin password, the instance's stored state) are removed.
func (c *Compute) Redacted() *Compute {
	out := *c
	out.Instance = nil
	if c.SSHSettings != nil {
		s := *c.SSHSettings
		s.AdminPassword, s.AdminPasswordHash = "", ""
		out.SSHSettings = &s
	}
	return &out
}

// ETag returns the ETag of a resource version: the version number, quoted,
// as HTTP writes entity tags.
func ETag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }

// ComputeUpdate is a partial update of a compute's mutable fields, as
// `shoal compute update` sends it. Nil fields are left as they are.
type ComputeUpdate struct {
	MinInstances            *int `json:"min_instances,omitempty"`
	MaxInstances            *int `json:"max_instances,omitempty"`
	IdleTimeBeforeScaleDown *int `json:"idle_time_before_scale_down,omitempty"`
	// IdlePolicy: "adaptive" or "fixed" (the number alone).
	IdlePolicy      *string            `json:"idle_policy,omitempty"`
	WaitCostPerHour *float64           `json:"wait_cost_per_hour,omitempty"`
	Description     *string            `json:"description,omitempty"`
	Tags            *map[string]string `json:"tags,omitempty"`
	Identity        *IdentitySpec      `json:"identity,omitempty"`
	// Instances: idle shutdown (15–4320 minutes, or 0 to turn it off), the
	// SSH key (only the assigned user, only when SSH is enabled), the
	// schedules and the CPU floor.
	IdleTimeBeforeShutdownMinutes *int              `json:"idle_time_before_shutdown_minutes,omitempty"`
	SSHKeyValue                   *string           `json:"ssh_key_value,omitempty"`
	Schedules                     *ComputeSchedules `json:"schedules,omitempty"`
	IdleCPUPercentBelow           *float64          `json:"idle_cpu_percent_below,omitempty"`
}

// ComputeFilter selects computes in ListComputes.
type ComputeFilter struct {
	Workspace string
	// AllWorkspaces lists the computes of every workspace (Workspace is
	// then ignored), ordered by workspace: the loops and the checks that
	// span workspaces (instance names are unique across a location) read
	// them in one query.
	AllWorkspaces bool
	// Type, when set, keeps only computes of that type.
	Type string
	// IncludeServerless keeps serverless pools in ComputeService's
	// listing, which hides them otherwise (Azure's
	// --include-serverless). The store's ListComputes ignores it and
	// lists them all: the control loops see a serverless pool as any
	// other cluster.
	IncludeServerless bool
}

// ComputeService manages compute resources. Every method takes the acting
// principal from ctx (see WithPrincipal).
type ComputeService interface {
	// CreateOrApplyCompute creates the compute, or applies spec to the existing
	// one of that name when only mutable fields differ (ECONFLICT naming the
	// immutable fields otherwise). ifMatch, when not empty, must equal the
	// current ETag (EPRECONDITION). Returns EINVALID, ECONFLICT, ENOTFOUND
	// (workspace), EPRECONDITION. The bool reports whether it was created.
	CreateOrApplyCompute(ctx context.Context, workspace string, spec *ComputeSpec, ifMatch string) (*Compute, bool, error)
	// UpdateCompute applies a partial update. Returns EINVALID, ENOTFOUND, EPRECONDITION.
	UpdateCompute(ctx context.Context, workspace, name string, upd *ComputeUpdate, ifMatch string) (*Compute, error)
	// FindCompute returns one compute with its computed status. Returns ENOTFOUND.
	FindCompute(ctx context.Context, workspace, name string) (*Compute, error)
	// ListComputes returns the workspace's computes ordered by name.
	ListComputes(ctx context.Context, filter ComputeFilter) ([]*Compute, error)
	// DeleteCompute starts deleting the compute: it moves to Deleting and is
	// removed once its nodes are released. Returns ENOTFOUND, EPRECONDITION.
	DeleteCompute(ctx context.Context, workspace, name string, ifMatch string) (*Compute, error)
	// ListComputeEvents returns the compute's event log, oldest first.
	ListComputeEvents(ctx context.Context, workspace, name string) ([]*core.Event, error)
}

// TierFallback moves jobs of a low-priority cluster to dedicated nodes
// when low-priority capacity does not come: After is how long a job waits
// first ("10m"; Go duration syntax).
type TierFallback struct {
	After string `json:"after"`
}

// Duration returns After as a duration (0 when unparsable: validation
// refuses those).
func (f *TierFallback) Duration() time.Duration {
	if f == nil {
		return 0
	}
	d, _ := time.ParseDuration(f.After)
	return d
}

// ComputeKey identifies a cluster across workspaces for the scheduler.
func ComputeKey(workspace, compute string) string {
	return strings.ToLower(workspace) + "/" + strings.ToLower(compute)
}

// Subscription and resource group used in resource IDs; Shoal has neither,
// but Azure tooling parses IDs of this shape.
const (
	Subscription  = "00000000-0000-0000-0000-000000000000"
	ResourceGroup = "shoal"
)

// ComputeResourceID returns the Azure-shaped resource ID of a compute.
func ComputeResourceID(workspace, name string) string {
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/Microsoft.MachineLearningServices/workspaces/%s/computes/%s",
		Subscription, ResourceGroup, workspace, name)
}

// AppendComputeEvent records an event on a compute in tx, as the
// principal of ctx.
func AppendComputeEvent(ctx context.Context, tx core.EventAppender, c *Compute, kind, reason string) error {
	return tx.AppendEvent(&core.Event{
		Time: tx.Now(), Workspace: c.Workspace, ResourceType: core.ResourceCompute,
		ResourceName: c.Name, Kind: kind, Actor: identity.ActorName(ctx), Reason: reason,
	})
}
