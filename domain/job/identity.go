package job

import (
	"encoding/json"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/jobdecode"
)

// Identity types of a job (Azure ML's identity.type).
const (
	// IdentityManaged: the job acts as its compute's managed identity
	// (the one client_id, object_id or msi_resource_id names, or the
	// compute's default), through the identity endpoint of its rank.
	IdentityManaged = "managed"
	// IdentityUserIdentity: the job acts as the user who submitted it,
	// never with more than that user's rights and never as an
	// administrator, through the same endpoint.
	IdentityUserIdentity = "user_identity"
	// IdentityAMLToken: the job acts only through the token Azure ML
	// gives every job for its own run (Shoal's tracking token, for
	// MLflow): its rank gets no identity endpoint.
	IdentityAMLToken = "aml_token"
)

// identityKeys are the keys of a job's identity mapping (azure-ai-ml's
// ManagedIdentitySchema; the other types have type only).
var identityKeys = compute.KeySchema{"type": nil, "client_id": nil, "object_id": nil, "msi_resource_id": nil}

// JobIdentity is a job's identity: what its code acts as when it asks
// the rank's identity endpoint (IDENTITY_ENDPOINT, MSI_ENDPOINT) for a
// token. Absent, the job gets its compute's managed identities, if any.
type JobIdentity struct {
	Type          string `json:"type"`
	ClientID      string `json:"client_id,omitempty"`
	ObjectID      string `json:"object_id,omitempty"`
	MSIResourceID string `json:"msi_resource_id,omitempty"`
}

// DecodeJobIdentity reads a job's identity mapping, nil when absent
// (a pipeline's top-level identity too).
func DecodeJobIdentity(raw json.RawMessage) (*JobIdentity, error) {
	if compute.NonNull(raw) == nil {
		return nil, nil
	}
	m, err := jobdecode.CheckedMapping(raw, "identity", identityKeys)
	if m == nil {
		return nil, err
	}
	id := &JobIdentity{}
	if err := m.DecodeFields("identity.",
		jobdecode.StringField("type", &id.Type), jobdecode.StringField("client_id", &id.ClientID),
		jobdecode.StringField("object_id", &id.ObjectID), jobdecode.StringField("msi_resource_id", &id.MSIResourceID),
	); err != nil {
		return nil, err
	}
	return id, nil
}

// NormalizeJobIdentity puts an identity's type in its canonical spelling
// (Azure's REST names, UserIdentity, Managed, AMLToken, are taken too)
// and checks that only a managed identity names one. field is where the
// identity is (identity, jobs.<step>.identity).
func NormalizeJobIdentity(field string, id *JobIdentity) error {
	if id == nil {
		return nil
	}
	t := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(id.Type), "_", ""))
	switch t {
	case "managed", "managedidentity":
		id.Type = IdentityManaged
	case "useridentity":
		id.Type = IdentityUserIdentity
	case "amltoken":
		id.Type = IdentityAMLToken
	case "":
		return core.FieldErrorf(field+".type", "is required: user_identity, managed or aml_token")
	default:
		return core.FieldErrorf(field+".type", "unknown identity type %q; use user_identity, managed or aml_token", core.Short(id.Type))
	}
	for _, f := range []struct{ key, v string }{{"client_id", id.ClientID}, {"object_id", id.ObjectID}, {"msi_resource_id", id.MSIResourceID}} {
		if f.v == "" {
			continue
		}
		if id.Type != IdentityManaged {
			return core.FieldErrorf(field+"."+f.key, "names a managed identity; a %s identity has type only", id.Type)
		}
		if len(f.v) > 1024 {
			return core.FieldErrorf(field+"."+f.key, "must be at most 1024 characters long")
		}
		if err := core.NoControl(field+"."+f.key, f.v); err != nil {
			return err
		}
	}
	return nil
}
