// Package armcompute translates Azure's compute resources (2022-10-01's
// ComputeResource: AmlCompute clusters, ComputeInstances with their
// start/stop schedules and setup scripts, attached Kubernetes) to and
// from the compute specs package domain/compute validates, so that a
// compute an Azure SDK PUTs passes the same rules as one `shoal compute
// create -f` sends. Package arm serves the routes.
package armcompute

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// ResourceType is the type string of a compute resource.
const ResourceType = "Microsoft.MachineLearningServices/workspaces/computes"

// Resource is ComputeResource.
type Resource struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Type       string            `json:"type"`
	Location   string            `json:"location,omitempty"`
	Tags       map[string]string `json:"tags,omitempty"`
	Identity   *Identity         `json:"identity,omitempty"`
	Properties *Properties       `json:"properties,omitempty"`
}

// Identity is a managed identity in ARM's shape.
type Identity struct {
	Type                   string                         `json:"type"`
	PrincipalID            string                         `json:"principalId,omitempty"`
	TenantID               string                         `json:"tenantId,omitempty"`
	UserAssignedIdentities map[string]*UserAssignedObject `json:"userAssignedIdentities,omitempty"`
}

// UserAssignedObject is one user-assigned identity.
type UserAssignedObject struct {
	PrincipalID string `json:"principalId,omitempty"`
	ClientID    string `json:"clientId,omitempty"`
}

// Properties are the properties common to every compute type; the
// type-specific part is Properties.Properties.
type Properties struct {
	ComputeType        string          `json:"computeType"`
	ComputeLocation    string          `json:"computeLocation,omitempty"`
	ProvisioningState  string          `json:"provisioningState,omitempty"`
	Description        string          `json:"description,omitempty"`
	CreatedOn          *time.Time      `json:"createdOn,omitempty"`
	ModifiedOn         *time.Time      `json:"modifiedOn,omitempty"`
	ResourceID         string          `json:"resourceId,omitempty"`
	ProvisioningErrors []any           `json:"provisioningErrors"`
	IsAttachedCompute  bool            `json:"isAttachedCompute"`
	DisableLocalAuth   bool            `json:"disableLocalAuth"`
	Properties         json.RawMessage `json:"properties,omitempty"`
}

// AmlComputeProperties are a cluster's.
type AmlComputeProperties struct {
	OSType                        string           `json:"osType,omitempty"`
	VMSize                        string           `json:"vmSize,omitempty"`
	VMPriority                    string           `json:"vmPriority,omitempty"`
	ScaleSettings                 *ScaleSettings   `json:"scaleSettings,omitempty"`
	RemoteLoginPortPublicAccess   string           `json:"remoteLoginPortPublicAccess,omitempty"`
	EnableNodePublicIP            *bool            `json:"enableNodePublicIp,omitempty"`
	IsolatedNetwork               *bool            `json:"isolatedNetwork,omitempty"`
	AllocationState               string           `json:"allocationState,omitempty"`
	AllocationStateTransitionTime *time.Time       `json:"allocationStateTransitionTime,omitempty"`
	CurrentNodeCount              *int             `json:"currentNodeCount,omitempty"`
	TargetNodeCount               *int             `json:"targetNodeCount,omitempty"`
	NodeStateCounts               *NodeStateCounts `json:"nodeStateCounts,omitempty"`
	Errors                        []any            `json:"errors,omitempty"`
}

// ScaleSettings are a cluster's node bounds and idle timeout.
type ScaleSettings struct {
	MaxNodeCount                *int   `json:"maxNodeCount,omitempty"`
	MinNodeCount                *int   `json:"minNodeCount,omitempty"`
	NodeIdleTimeBeforeScaleDown string `json:"nodeIdleTimeBeforeScaleDown,omitempty"`
}

// NodeStateCounts counts a cluster's nodes by state.
type NodeStateCounts struct {
	IdleNodeCount      int `json:"idleNodeCount"`
	RunningNodeCount   int `json:"runningNodeCount"`
	PreparingNodeCount int `json:"preparingNodeCount"`
	UnusableNodeCount  int `json:"unusableNodeCount"`
	LeavingNodeCount   int `json:"leavingNodeCount"`
	PreemptedNodeCount int `json:"preemptedNodeCount"`
}

// InstanceProperties are a compute instance's.
type InstanceProperties struct {
	VMSize                           string               `json:"vmSize,omitempty"`
	State                            string               `json:"state,omitempty"`
	SSHSettings                      *InstanceSSHSettings `json:"sshSettings,omitempty"`
	ApplicationSharingPolicy         string               `json:"applicationSharingPolicy,omitempty"`
	ComputeInstanceAuthorizationType string               `json:"computeInstanceAuthorizationType,omitempty"`
	PersonalComputeInstanceSettings  *struct {
		AssignedUser *AssignedUser `json:"assignedUser,omitempty"`
	} `json:"personalComputeInstanceSettings,omitempty"`
	IdleTimeBeforeShutdown string              `json:"idleTimeBeforeShutdown,omitempty"`
	EnableSSO              *bool               `json:"enableSSO,omitempty"`
	EnableRootAccess       *bool               `json:"enableRootAccess,omitempty"`
	ReleaseQuotaOnStop     *bool               `json:"releaseQuotaOnStop,omitempty"`
	LastOperation          *LastOperation      `json:"lastOperation,omitempty"`
	Errors                 []armcore.ErrorBody `json:"errors,omitempty"`
	Schedules              json.RawMessage     `json:"schedules,omitempty"`
	SetupScripts           json.RawMessage     `json:"setupScripts,omitempty"`
	CustomServices         json.RawMessage     `json:"customServices,omitempty"`
}

// InstanceSSHSettings are an instance's SSH access.
type InstanceSSHSettings struct {
	SSHPublicAccess string `json:"sshPublicAccess,omitempty"`
	AdminUserName   string `json:"adminUserName,omitempty"`
	SSHPort         int    `json:"sshPort,omitempty"`
	AdminPublicKey  string `json:"adminPublicKey,omitempty"`
}

// AssignedUser is the user an instance was created for.
type AssignedUser struct {
	ObjectID string `json:"objectId"`
	TenantID string `json:"tenantId,omitempty"`
}

// LastOperation is an instance's last start, stop, restart or create.
type LastOperation struct {
	OperationName    string     `json:"operationName"`
	OperationTime    *time.Time `json:"operationTime,omitempty"`
	OperationStatus  string     `json:"operationStatus"`
	OperationTrigger string     `json:"operationTrigger,omitempty"`
}

// ToResource is a compute as ARM shows it.
func ToResource(scope armcore.Scope, c *compute.Compute) *Resource {
	return ToResourceWith(scope, c, nil)
}

// ToResourceWith is ToResource with an attached Kubernetes compute's
// instance type (from its location), which its properties list.
func ToResourceWith(scope armcore.Scope, c *compute.Compute, instanceType *catalog.InstanceType) *Resource {
	r := &Resource{
		ID: scope.WorkspaceID(c.Workspace) + "/computes/" + c.Name, Name: c.Name, Type: ResourceType,
		Location: c.Location, Tags: c.Tags, Identity: toIdentity(c.Identity),
	}
	created, modified := c.CreatedOn, c.ModifiedOn
	p := &Properties{
		ComputeLocation: c.Location, ProvisioningState: c.ProvisioningState, Description: c.Description,
		CreatedOn: &created, ModifiedOn: &modified, ResourceID: r.ID, ProvisioningErrors: []any{},
	}
	if c.Type == compute.ComputeTypeKubernetes {
		kubernetesProperties(p, c, instanceType)
	} else if c.IsInstance() {
		p.ComputeType = "ComputeInstance"
		ip := InstanceProperties{VMSize: c.Size, State: c.State, ApplicationSharingPolicy: "Personal", ComputeInstanceAuthorizationType: "personal",
			EnableSSO: c.EnableSSO, EnableRootAccess: c.EnableRootAccess, ReleaseQuotaOnStop: c.ReleaseQuotaOnStop}
		ssh := &InstanceSSHSettings{SSHPublicAccess: "Disabled", AdminUserName: compute.InstanceAdminUsername}
		if c.SSHPublicAccessEnabled != nil && *c.SSHPublicAccessEnabled {
			ssh.SSHPublicAccess = "Enabled"
		}
		if c.SSHSettings != nil {
			ssh.SSHPort, ssh.AdminPublicKey = c.SSHSettings.SSHPort, c.SSHSettings.SSHKeyValue
		}
		ip.SSHSettings = ssh
		if o := c.CreateOnBehalfOf; o != nil {
			ip.PersonalComputeInstanceSettings = &struct {
				AssignedUser *AssignedUser `json:"assignedUser,omitempty"`
			}{&AssignedUser{ObjectID: o.UserObjectID, TenantID: o.UserTenantID}}
		}
		if m := c.IdleTimeBeforeShutdownMinutes; m != nil && *m > 0 {
			ip.IdleTimeBeforeShutdown = "PT" + strconv.Itoa(*m) + "M"
		}
		ip.Schedules = schedulesTo(c.Schedules)
		ip.SetupScripts = setupScriptsTo(c.SetupScripts)
		if o := c.LastOperation; o != nil {
			t := o.OperationTime
			ip.LastOperation = &LastOperation{OperationName: o.OperationName, OperationTime: &t, OperationStatus: o.OperationStatus, OperationTrigger: o.OperationTrigger}
		}
		// Azure's ComputeInstance errors: ErrorResponse envelopes.
		for _, e := range c.Errors {
			ip.Errors = append(ip.Errors, armcore.ErrorBody{Error: armcore.ErrorDetail{Code: e.Code, Message: e.Message, Details: []armcore.ErrorDetail{}}})
		}
		b, _ := json.Marshal(ip)
		p.Properties = b
	} else {
		p.ComputeType = "AmlCompute"
		ssh := "Disabled"
		if c.SSHPublicAccessEnabled != nil && *c.SSHPublicAccessEnabled {
			ssh = "Enabled"
		}
		prio := "Dedicated"
		if c.Tier == compute.TierLowPriority {
			prio = "LowPriority"
		}
		cur, tgt := c.CurrentNodeCount, c.TargetNodeCount
		nc := c.NodeStateCounts
		ap := AmlComputeProperties{
			OSType: "Linux", VMSize: c.Size, VMPriority: prio, RemoteLoginPortPublicAccess: ssh, EnableNodePublicIP: c.EnableNodePublicIP,
			ScaleSettings:   &ScaleSettings{MaxNodeCount: c.MaxInstances, MinNodeCount: c.MinInstances},
			AllocationState: map[string]string{compute.AllocationSteady: "Steady", compute.AllocationResizing: "Resizing"}[c.AllocationState], AllocationStateTransitionTime: c.AllocationStateTransitionTime,
			CurrentNodeCount: &cur, TargetNodeCount: &tgt,
			NodeStateCounts: &NodeStateCounts{IdleNodeCount: nc.IdleNodeCount, RunningNodeCount: nc.RunningNodeCount,
				PreparingNodeCount: nc.PreparingNodeCount, UnusableNodeCount: nc.UnusableNodeCount,
				LeavingNodeCount: nc.LeavingNodeCount, PreemptedNodeCount: nc.PreemptedNodeCount},
		}
		if c.IdleTimeBeforeScaleDown != nil {
			ap.ScaleSettings.NodeIdleTimeBeforeScaleDown = armcore.FormatSeconds(*c.IdleTimeBeforeScaleDown)
		}
		b, _ := json.Marshal(ap)
		p.Properties = b
	}
	r.Properties = p
	return r
}

func toIdentity(id *compute.IdentitySpec) *Identity {
	if id == nil || id.Type == "" {
		return nil
	}
	out := &Identity{PrincipalID: id.PrincipalID, TenantID: id.TenantID}
	var parts []string
	for _, t := range strings.Split(id.Type, ",") {
		switch strings.TrimSpace(t) {
		case "system_assigned":
			parts = append(parts, "SystemAssigned")
		case "user_assigned":
			parts = append(parts, "UserAssigned")
		case "none":
			parts = append(parts, "None")
		}
	}
	out.Type = strings.Join(parts, ",")
	for _, u := range id.UserAssignedIdentities {
		if out.UserAssignedIdentities == nil {
			out.UserAssignedIdentities = map[string]*UserAssignedObject{}
		}
		out.UserAssignedIdentities[u.ResourceID] = &UserAssignedObject{PrincipalID: u.PrincipalID, ClientID: u.ClientID}
	}
	return out
}

// FromResource reads a PUT body into the spec the services validate.
// Only clusters (AmlCompute) are created through ARM here.
func FromResource(name string, body []byte) (*compute.ComputeSpec, error) {
	var r Resource
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, core.FieldErrorf("body", "not a ComputeResource: %v", err)
	}
	if r.Properties == nil {
		return nil, core.FieldErrorf("properties", "is required")
	}
	spec := &compute.ComputeSpec{Name: name, Location: r.Location, Tags: r.Tags, Description: r.Properties.Description}
	if r.Properties.ComputeLocation != "" {
		spec.Location = r.Properties.ComputeLocation
	}
	switch strings.ToLower(r.Properties.ComputeType) {
	case "amlcompute":
		spec.Type = "amlcompute"
	case "computeinstance":
		spec.Type = "computeinstance"
		if err := instanceSpec(spec, r.Properties.Properties); err != nil {
			return nil, err
		}
	case "kubernetes":
		if err := kubernetesSpec(spec, r.Properties); err != nil {
			return nil, err
		}
	default:
		return nil, core.FieldErrorf("properties.computeType", "%q is not a compute Shoal runs (AmlCompute, ComputeInstance, Kubernetes)", r.Properties.ComputeType)
	}
	if spec.Type == "amlcompute" && len(r.Properties.Properties) > 0 {
		var ap AmlComputeProperties
		if err := json.Unmarshal(r.Properties.Properties, &ap); err != nil {
			return nil, core.FieldErrorf("properties.properties", "%v", err)
		}
		spec.Size = ap.VMSize
		switch strings.ToLower(ap.VMPriority) {
		case "", "dedicated":
			if ap.VMPriority != "" {
				spec.Tier = compute.TierDedicated
			}
		case "lowpriority":
			spec.Tier = compute.TierLowPriority
		default:
			return nil, core.FieldErrorf("properties.properties.vmPriority", "%q is not Dedicated or LowPriority", ap.VMPriority)
		}
		if s := ap.ScaleSettings; s != nil {
			spec.MaxInstances, spec.MinInstances = s.MaxNodeCount, s.MinNodeCount
			if s.NodeIdleTimeBeforeScaleDown != "" {
				d, err := armcore.ParseDuration(s.NodeIdleTimeBeforeScaleDown)
				if err != nil {
					return nil, core.FieldErrorf("properties.properties.scaleSettings.nodeIdleTimeBeforeScaleDown", "%v", err)
				}
				secs := int(d / time.Second)
				spec.IdleTimeBeforeScaleDown = &secs
			}
		}
		switch ap.RemoteLoginPortPublicAccess {
		case "Enabled":
			t := true
			spec.SSHPublicAccessEnabled = &t
		case "Disabled":
			f := false
			spec.SSHPublicAccessEnabled = &f
		}
		spec.EnableNodePublicIP = ap.EnableNodePublicIP
	}
	if r.Identity != nil && r.Identity.Type != "" {
		var parts []string
		for _, t := range strings.Split(r.Identity.Type, ",") {
			switch strings.ToLower(strings.TrimSpace(t)) {
			case "systemassigned":
				parts = append(parts, "system_assigned")
			case "userassigned":
				parts = append(parts, "user_assigned")
			case "none":
				parts = append(parts, "none")
			default:
				return nil, core.FieldErrorf("identity.type", "%q is not SystemAssigned, UserAssigned or None", t)
			}
		}
		spec.Identity = &compute.IdentitySpec{Type: strings.Join(parts, ",")}
		for id := range r.Identity.UserAssignedIdentities {
			spec.Identity.UserAssignedIdentities = append(spec.Identity.UserAssignedIdentities, compute.UserAssignedIdentity{ResourceID: id})
		}
	}
	return spec, nil
}
