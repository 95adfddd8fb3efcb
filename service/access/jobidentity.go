package access

import (
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// A job's identity (identity: on the job) decides what its rank's
// identity endpoint offers:
//
//   - none: the compute's managed identities, as ever;
//   - managed: the compute's, or the one client_id, object_id (Shoal's
//     identities have one ID, their client ID) or msi_resource_id names;
//   - user_identity: one identity, the submitter: its tokens act as the
//     user who submitted the job, with that user's roles and never as an
//     administrator (an administrator's job gets the roles assigned to it
//     in the workspace, not the server's rights);
//   - aml_token: none; the job acts through the token every job gets for
//     its own run (MLflow tracking).

// userIdentityName names the submitter among a task's identities.
const userIdentityName = "user_identity"

// userSubjectPrefix starts the subject of a user_identity token, before
// the submitter's principal ID: identity subjects are "identity:<name>",
// so no managed identity can be mistaken for a user.
const userSubjectPrefix = "job-user:"

// UserIdentityClientID is the client ID a user_identity job sees for
// its submitter (DEFAULT_IDENTITY_CLIENT_ID): derived from the
// principal, stable, shaped as Azure's GUIDs are.
func UserIdentityClientID(principal string) string {
	s := sha256.Sum256([]byte("shoal user identity\x00" + principal))
	return fmt.Sprintf("%x-%x-%x-%x-%x", s[0:4], s[4:6], s[6:8], s[8:10], s[10:16])
}

// JobIdentities returns the identities job j's ranks may ask tokens for
// on compute c, the default first (see above).
func JobIdentities(tx store.Tx, c *compute.Compute, j *job.Job) []node.TaskIdentity {
	id := j.Identity
	switch {
	case id == nil:
		return TaskIdentities(tx, c)
	case id.Type == job.IdentityAMLToken:
		return nil
	case id.Type == job.IdentityUserIdentity:
		if j.CreatedByPrincipal == "" {
			return nil
		}
		return []node.TaskIdentity{{ClientID: UserIdentityClientID(j.CreatedByPrincipal), Name: userIdentityName}}
	}
	all := TaskIdentities(tx, c)
	if id.ClientID == "" && id.ObjectID == "" && id.MSIResourceID == "" {
		return all
	}
	for _, ti := range all {
		if namesIdentity(id, ti) {
			return []node.TaskIdentity{ti}
		}
	}
	return nil
}

func namesIdentity(id *job.JobIdentity, ti node.TaskIdentity) bool {
	switch {
	case id.ClientID != "":
		return strings.EqualFold(id.ClientID, ti.ClientID)
	case id.ObjectID != "":
		return strings.EqualFold(id.ObjectID, ti.ClientID)
	}
	return identityNameOf(id.MSIResourceID) == ti.Name
}

// CheckJobIdentity refuses, at submission, a managed identity the
// compute does not have: the job would otherwise start and fail at its
// first token. field is where the identity is written.
func CheckJobIdentity(tx store.Tx, c *compute.Compute, field string, id *job.JobIdentity) error {
	if id == nil || id.Type != job.IdentityManaged {
		return nil
	}
	probe := &job.Job{JobSpec: job.JobSpec{Identity: id}}
	if len(JobIdentities(tx, c, probe)) > 0 {
		return nil
	}
	if len(TaskIdentities(tx, c)) == 0 {
		return core.FieldErrorf(field, "compute %s has no managed identity: give it one (identity: {type: system_assigned}) or use identity type user_identity", c.Name)
	}
	return core.FieldErrorf(field, "names no managed identity of compute %s", c.Name)
}

// tokenSubject is the subject of a workload token for the identity
// chosen among a job's: the submitter's for user_identity.
func tokenSubject(j *job.Job, chosen node.TaskIdentity) string {
	if j.Identity != nil && j.Identity.Type == job.IdentityUserIdentity && chosen.Name == userIdentityName {
		return userSubjectPrefix + j.CreatedByPrincipal
	}
	return "identity:" + chosen.Name
}

// JobTokenSubject is tokenSubject for the minting side (agentapi).
func JobTokenSubject(j *job.Job, chosen node.TaskIdentity) string { return tokenSubject(j, chosen) }

// userIdentityPrincipal is the principal of a user_identity token of
// job j: the submitter, bound to the attempt, never an administrator.
// The token must name that submitter and the client ID derived from it,
// and the job must (still) ask for user_identity.
func userIdentityPrincipal(j *job.Job, subject, clientID, attemptID string) (*identity.Principal, error) {
	p, _ := strings.CutPrefix(subject, userSubjectPrefix)
	if j.Identity == nil || j.Identity.Type != job.IdentityUserIdentity || p == "" || p != j.CreatedByPrincipal ||
		!strings.EqualFold(clientID, UserIdentityClientID(p)) {
		return nil, core.Errorf(core.EUNAUTHORIZED, "the token's user identity is not its job's")
	}
	return &identity.Principal{ID: p, Name: p + " (job " + j.Name + ")", Kind: identity.PrincipalUser, AttemptID: attemptID, Workspace: j.Workspace}, nil
}
