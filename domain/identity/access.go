package identity

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// Actions, named like Azure's (Microsoft.MachineLearningServices/workspaces/...).
// Each route of the API requires one; roles grant them.
const (
	ActComputesRead              = "computes/read"
	ActComputesWrite             = "computes/write"
	ActComputesDelete            = "computes/delete"
	ActComputesStart             = "computes/start/action"
	ActComputesStop              = "computes/stop/action"
	ActComputesRestart           = "computes/restart/action"
	ActComputesApplicationAccess = "computes/applicationaccess/action"
	ActComputesUpdateSchedules   = "computes/updateSchedules/action"
	ActComputesEnableSSO         = "computes/enableSso/action"
	ActComputesPreemptNode       = "computes/preemptNode/action"
	ActComputesJoinNode          = "computes/joinNode/action" // add-node: a machine of the caller's joins a cluster
	ActJobsRead                  = "jobs/read"
	ActJobsWrite                 = "jobs/write"
	ActJobsCancel                = "jobs/cancel/action"
	ActArtifactsWrite            = "artifacts/write"
	// Registered environments: reading them and creating versions,
	// archiving or restoring them (Azure's environments/read and
	// environments/write, both in its AzureML Data Scientist role).
	ActEnvironmentsRead  = "environments/read"
	ActEnvironmentsWrite = "environments/write"
	// Registered command components: reading them and creating versions,
	// archiving or restoring them (Azure's components/read and
	// components/write).
	ActComponentsRead  = "components/read"
	ActComponentsWrite = "components/write"
	// Registered data assets and models: reading them and creating
	// versions, archiving or restoring them (Azure's data/* and models/*,
	// in its AzureML Data Scientist role).
	ActDataRead    = "data/read"
	ActDataWrite   = "data/write"
	ActModelsRead  = "models/read"
	ActModelsWrite = "models/write"
	// Code assets (Azure's codes/*): reading versions and creating them,
	// which includes startPendingUpload's SAS to upload a version's
	// files; Contributors write them, as they submit jobs with code.
	ActCodesRead  = "codes/read"
	ActCodesWrite = "codes/write"
	// Private container registries' logins: listing them (never their
	// passwords) and adding or removing them. Only Owners write them: a
	// login is a team's secret, and whoever adds one decides which
	// registry the workspace's jobs trust.
	ActRegistriesRead  = "registries/read"
	ActRegistriesWrite = "registries/write"
	// Datastores: reading them (never their credentials) and creating,
	// replacing or deleting them, which also lets ARM's listSecrets
	// answer their credentials, as Azure's datastores/write does.
	// Contributors write them, as in Azure (the AzureML Data Scientist
	// role includes it).
	ActDatastoresRead  = "datastores/read"
	ActDatastoresWrite = "datastores/write"
	// Batch endpoints and their deployments: reading them; creating,
	// updating and deleting them; and invoking an endpoint, which starts
	// a job as the invoker (Azure's batchEndpoints/read, write and
	// deployments/jobs/write). Readers read them; Contributors do all
	// three; an endpoint's invoke token holds only the invoke action, on
	// that endpoint alone.
	ActBatchEndpointsRead   = "batchEndpoints/read"
	ActBatchEndpointsWrite  = "batchEndpoints/write"
	ActBatchEndpointsInvoke = "batchEndpoints/deployments/jobs/write"
	// Job schedules (Azure's schedules/read and write): Readers read
	// them; Contributors create, change, enable, disable, trigger and
	// delete them. Each firing submits its job as the principal that last
	// wrote the schedule, if it still may submit jobs.
	ActSchedulesRead  = "schedules/read"
	ActSchedulesWrite = "schedules/write"
	// Webhooks and their deliveries: only Owners read or write them. A
	// webhook decides where the workspace's events go (and its URL may
	// carry the receiver's own secret), as a registry login decides what
	// the workspace's jobs trust.
	ActWebhooksRead    = "webhooks/read"
	ActWebhooksWrite   = "webhooks/write"
	ActQuotasRead      = "quotas/read"
	ActQuotasWrite     = "quotas/write"
	ActRolesRead       = "roles/read"
	ActRolesWrite      = "roles/write"
	ActWorkspacesRead  = "workspaces/read"
	ActWorkspacesWrite = "workspaces/write"
	ActAuditRead       = "audit/read"
	// Server-scoped actions: only administrators hold them.
	ActUsersRead       = "users/read"
	ActUsersWrite      = "users/write"
	ActIdentitiesRead  = "identities/read"
	ActIdentitiesWrite = "identities/write"
	ActTokensWrite     = "tokens/write"
)

// WorkspaceActions lists every workspace-scoped action, for role checks and
// the matrix test.
var WorkspaceActions = []string{
	ActComputesRead, ActComputesWrite, ActComputesDelete, ActComputesStart, ActComputesStop,
	ActComputesRestart, ActComputesApplicationAccess, ActComputesUpdateSchedules, ActComputesEnableSSO,
	ActComputesPreemptNode, ActComputesJoinNode, ActJobsRead, ActJobsWrite, ActJobsCancel, ActArtifactsWrite,
	ActEnvironmentsRead, ActEnvironmentsWrite, ActComponentsRead, ActComponentsWrite, ActRegistriesRead, ActRegistriesWrite,
	ActDatastoresRead, ActDatastoresWrite,
	ActQuotasRead, ActQuotasWrite, ActRolesRead, ActRolesWrite, ActWorkspacesRead, ActWorkspacesWrite, ActAuditRead,
	ActDataRead, ActDataWrite, ActModelsRead, ActModelsWrite,
	ActCodesRead, ActCodesWrite,
	ActBatchEndpointsRead, ActBatchEndpointsWrite, ActBatchEndpointsInvoke,
	ActSchedulesRead, ActSchedulesWrite, ActWebhooksRead, ActWebhooksWrite,
}

// Built-in role names.
const (
	RoleOwner       = "Owner"
	RoleContributor = "Contributor"
	RoleReader      = "Reader"
)

// RoleDefinition grants actions. Actions may use '*' as a whole segment
// wildcard ("computes/*", "*/read") or alone ("*"); NotActions subtract.
type RoleDefinition struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Actions     []string  `json:"actions"`
	NotActions  []string  `json:"not_actions,omitempty"`
	BuiltIn     bool      `json:"built_in"`
	CreatedOn   time.Time `json:"created_on,omitempty"`
}

// BuiltinRoles are Azure's three built-in roles as they apply to Shoal:
// Owner may do everything in the workspace, Contributor everything but
// change who has access, Reader only read. Preempting nodes is kept for
// Owners: it rehearses an outage on shared capacity. So is joining a
// machine by hand (computes/joinNode/action): whoever controls that
// machine sees the work of every job placed on it.
func BuiltinRoles() []*RoleDefinition {
	return []*RoleDefinition{
		{Name: RoleOwner, Description: "full access, including granting roles", Actions: []string{"*"}, BuiltIn: true},
		{Name: RoleContributor, Description: "create, change and delete computes and jobs; cannot grant roles", Actions: []string{"*"},
			NotActions: []string{ActRolesWrite, ActComputesPreemptNode, ActComputesJoinNode, ActQuotasWrite, ActWorkspacesWrite, ActRegistriesWrite,
				ActWebhooksRead, ActWebhooksWrite}, BuiltIn: true},
		{Name: RoleReader, Description: "read everything but webhooks, change nothing", Actions: []string{"*/read"},
			NotActions: []string{ActWebhooksRead}, BuiltIn: true},
	}
}

// Allows reports whether the role grants action.
func (r *RoleDefinition) Allows(action string) bool {
	for _, n := range r.NotActions {
		if actionMatches(n, action) {
			return false
		}
	}
	for _, a := range r.Actions {
		if actionMatches(a, action) {
			return true
		}
	}
	return false
}

// actionMatches matches an action against a pattern where a '*' segment
// matches any one segment, and a lone "*" matches everything.
func actionMatches(pattern, action string) bool {
	if pattern == "*" || strings.EqualFold(pattern, action) {
		return true
	}
	ps, as := strings.Split(pattern, "/"), strings.Split(action, "/")
	if len(ps) > len(as) {
		return false
	}
	for i, p := range ps {
		if p == "*" {
			if i == len(ps)-1 && i == 0 {
				return true
			}
			continue
		}
		if !strings.EqualFold(p, as[i]) {
			return false
		}
	}
	// "computes/*" covers "computes/start/action"; "*/read" only "x/read".
	return len(ps) == len(as) || ps[len(ps)-1] == "*"
}

// ValidateRoleDefinition checks a custom role.
func ValidateRoleDefinition(r *RoleDefinition) error {
	if err := ValidatePrincipalName("name", r.Name); err != nil {
		return err
	}
	for _, b := range BuiltinRoles() {
		if strings.EqualFold(b.Name, r.Name) {
			return core.FieldErrorf("name", "%q is a built-in role", r.Name)
		}
	}
	if len(r.Actions) == 0 {
		return core.FieldErrorf("actions", "a role must grant at least one action")
	}
	for _, list := range [][]string{r.Actions, r.NotActions} {
		for _, a := range list {
			if !knownActionPattern(a) {
				return core.FieldErrorf("actions", "%q matches no action; actions are named like computes/read, computes/start/action, jobs/*, */read", a)
			}
		}
	}
	return nil
}

func knownActionPattern(p string) bool {
	for _, a := range WorkspaceActions {
		if actionMatches(p, a) {
			return true
		}
	}
	return false
}

// Principal kinds beyond admin, user and node.
const (
	PrincipalIdentity = "identity" // a workload acting through its managed identity
	// PrincipalJobRun is a job's attempt writing its own MLflow run with
	// the tracking token it was given (MLFLOW_TRACKING_TOKEN); it holds no
	// role and reaches nothing but that run and its experiment.
	PrincipalJobRun = "job_run"
)

// User is a person with API tokens.
type User struct {
	Name      string    `json:"name"`
	Disabled  bool      `json:"disabled"`
	Admin     bool      `json:"admin"`
	CreatedOn time.Time `json:"created_on"`
	// OIDCIssuer and OIDCSubject link the user to a sign-in provider
	// account (issuer + subject is the key; email is never trusted alone).
	OIDCIssuer  string `json:"oidc_issuer,omitempty"`
	OIDCSubject string `json:"oidc_subject,omitempty"`
}

// PrincipalID returns the user's principal ID.
func (u *User) PrincipalID() string { return "user:" + u.Name }

// Identity is a managed identity: what workloads act as.
type Identity struct {
	Name string `json:"name"`
	// ClientID is the identity's public ID (clientid= of the MSI endpoint).
	ClientID string `json:"client_id"`
	// System is set for a compute's system-assigned identity, named
	// "<workspace>/<compute>".
	System    bool      `json:"system_assigned"`
	CreatedOn time.Time `json:"created_on"`
}

// PrincipalID returns the identity's principal ID.
func (i *Identity) PrincipalID() string { return "identity:" + i.Name }

// RoleAssignment grants a role to a principal in a workspace.
type RoleAssignment struct {
	ID          string    `json:"id"`
	PrincipalID string    `json:"principal_id"`
	Role        string    `json:"role"`
	Workspace   string    `json:"workspace"`
	CreatedOn   time.Time `json:"created_on"`
	CreatedBy   string    `json:"created_by"`
}

// Audit outcomes.
const (
	AuditSucceeded = "succeeded"
	AuditDenied    = "denied"
	AuditFailed    = "failed"
)

// AuditRecord is one entry of the audit log.
type AuditRecord struct {
	ID          int64     `json:"id"`
	Time        time.Time `json:"time"`
	PrincipalID string    `json:"principal_id"`
	Action      string    `json:"action"`
	Target      string    `json:"target"`
	Workspace   string    `json:"workspace,omitempty"`
	Source      string    `json:"source_address"`
	Outcome     string    `json:"outcome"`
	Detail      string    `json:"detail,omitempty"`
}

// AuditFilter selects audit records; empty fields match all.
type AuditFilter struct {
	Since       time.Time
	PrincipalID string
	Target      string
	Limit       int
}

// RequestInfo describes the request a change is made for: the audit log
// records it with the change, in the same transaction.
type RequestInfo struct {
	Action    string
	Target    string
	Workspace string
	Source    string
	// Detail says what the change was, for the audit record (e.g. which
	// user got which role); services fill it in.
	Detail string
	// Audited is set once the request's change was recorded.
	Audited bool
}

// SetAuditDetail records what a change is about in the request's audit
// record, if the change is made for a request.
func SetAuditDetail(ctx context.Context, format string, args ...any) {
	if ri := RequestInfoFrom(ctx); ri != nil {
		ri.Detail = fmt.Sprintf(format, args...)
	}
}

type requestInfoKey struct{}

// WithRequestInfo returns a context carrying ri.
func WithRequestInfo(ctx context.Context, ri *RequestInfo) context.Context {
	return context.WithValue(ctx, requestInfoKey{}, ri)
}

// RequestInfoFrom returns the request info in ctx, or nil.
func RequestInfoFrom(ctx context.Context) *RequestInfo {
	ri, _ := ctx.Value(requestInfoKey{}).(*RequestInfo)
	return ri
}

// ValidatePrincipalName checks user, identity and role names.
func ValidatePrincipalName(field, name string) error {
	if len(name) < 1 || len(name) > 64 {
		return core.FieldErrorf(field, "%q must be 1 to 64 characters long", name)
	}
	for i, r := range name {
		ok := core.IsLowerRune(r) || core.IsUpperRune(r) || core.IsDigitRune(r) || (i > 0 && (r == '-' || r == '_' || r == '.'))
		if !ok {
			return core.FieldErrorf(field, "%q may contain only letters, digits, '-', '_' and '.', starting with a letter or digit", name)
		}
	}
	return nil
}

// ValidateUserName checks a user name.
func ValidateUserName(name string) error { return ValidatePrincipalName("name", name) }

// ValidateIdentityName checks a user-assigned identity name.
func ValidateIdentityName(name string) error { return ValidatePrincipalName("name", name) }

// SigningKey is a key the server signs workload tokens with. Keys rotate;
// retired keys stay published until tokens signed with them have expired.
type SigningKey struct {
	ID         string     `json:"kid"`
	PrivatePEM string     `json:"-"`
	CreatedOn  time.Time  `json:"created_on"`
	RetiredOn  *time.Time `json:"retired_on,omitempty"`
}

// Whoami describes the caller, for `shoal login` and clients.
type Whoami struct {
	Principal   *Principal        `json:"principal"`
	Assignments []*RoleAssignment `json:"role_assignments"`
}
