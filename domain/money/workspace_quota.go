package money

// WorkspaceQuota is one family's limit in one workspace.
type WorkspaceQuota struct {
	Workspace string `json:"workspace"`
	// ResourceGroup is the workspace's, for Azure's resource IDs.
	ResourceGroup string `json:"resource_group,omitempty"`
	Location      string `json:"location"`
	Family        string `json:"family"`
	// Limit is the workspace's own limit, or the location's when the
	// workspace has none (Own false); negative is unlimited.
	Limit int  `json:"limit"`
	Own   bool `json:"workspace_limit"`
	// Used is the vCPUs the workspace's nodes and instances of the
	// family hold now.
	Used int `json:"used"`
}

// Quota update outcomes, Azure's QuotaUpdateParameters statuses.
const (
	QuotaSuccess                  = "Success"
	QuotaInvalidFamily            = "InvalidVMFamilyName"
	QuotaExceedsSubscriptionLimit = "InvalidQuotaExceedsSubscriptionLimit"
	QuotaBelowClusterMinimum      = "InvalidQuotaBelowClusterMinimum"
	QuotaFailure                  = "Failure"
)

// QuotaUpdate asks for a workspace's limit of a family.
type QuotaUpdate struct {
	Workspace string `json:"workspace"`
	Family    string `json:"family"`
	Limit     int    `json:"limit"`
}

// QuotaUpdateResult is one update's outcome: Status is QuotaSuccess or
// says which rule it broke, and Message says it in words.
type QuotaUpdateResult struct {
	QuotaUpdate
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}
