package access

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/internal/workload"
	"github.com/shoal-ml/shoal/store"
)

// WorkloadTokenTTL is the lifetime of a workload token (the MSI endpoint's
// tokens); the issuer caps it at an hour.
const WorkloadTokenTTL = time.Hour

// workloadKeys adapts the store to workload.KeyStore. Private keys are
// sealed with the secrets key on their way into the store and opened on
// their way out: the store never holds one in the clear.
type workloadKeys struct{ s *Service }

// ListKeys implements workload.KeyStore.
func (k workloadKeys) ListKeys(ctx context.Context) (out []*identity.SigningKey, err error) {
	err = k.s.store.View(ctx, func(tx store.Tx) error {
		out, err = tx.ListSigningKeys()
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, sk := range out {
		if !sealing.IsSealed(sk.PrivatePEM) {
			continue // left by an older server until SealStoredSecrets
		}
		if k.s.cfg.SecretsKey == nil {
			return nil, noSecretsKey()
		}
		plain, err := k.s.cfg.SecretsKey.Open(sk.PrivatePEM, sk.ID)
		if err != nil {
			return nil, core.Errorf(core.EINTERNAL, "workload signing key %s cannot be decrypted with the secrets key %s: %v; every server sharing this store needs the same secrets_key_file", sk.ID, k.s.cfg.SecretsKey.Path, err)
		}
		opened := *sk
		opened.PrivatePEM = string(plain)
		out[i] = &opened
	}
	return out, nil
}

// noSecretsKey is the error of a server that has no secrets key.
func noSecretsKey() error {
	return core.Errorf(core.EINTERNAL, "workload signing keys are stored encrypted and this server has no secrets key: set secrets_key_file (default <data-dir>/keys/workload.key)")
}

// sealed returns key with its private key sealed for the store.
func (k workloadKeys) sealed(key *identity.SigningKey) (*identity.SigningKey, error) {
	if sealing.IsSealed(key.PrivatePEM) {
		return key, nil
	}
	if k.s.cfg.SecretsKey == nil {
		return nil, noSecretsKey()
	}
	v, err := k.s.cfg.SecretsKey.Seal([]byte(key.PrivatePEM), key.ID)
	if err != nil {
		return nil, err
	}
	out := *key
	out.PrivatePEM = v
	return &out, nil
}

// InsertKey implements workload.KeyStore.
func (k workloadKeys) InsertKey(ctx context.Context, key *identity.SigningKey) error {
	sk, err := k.sealed(key)
	if err != nil {
		return err
	}
	err = k.s.store.Update(ctx, func(tx store.Tx) error { return tx.InsertSigningKey(sk) })
	key.CreatedOn = sk.CreatedOn
	return err
}

// UpdateKey implements workload.KeyStore.
func (k workloadKeys) UpdateKey(ctx context.Context, key *identity.SigningKey) error {
	sk, err := k.sealed(key)
	if err != nil {
		return err
	}
	return k.s.store.Update(ctx, func(tx store.Tx) error { return tx.UpdateSigningKey(sk) })
}

// SealStoredSecrets encrypts what an older server stored in the clear:
// workload signing keys (sealed with the secrets key) and clusters' SSH
// admin passwords (replaced by their salted hash). It runs at start-up,
// before the issuer first loads its keys; it is idempotent.
func (s *Service) SealStoredSecrets(ctx context.Context) error {
	return s.store.Update(ctx, func(tx store.Tx) error {
		keys, err := tx.ListSigningKeys()
		if err != nil {
			return err
		}
		wk := workloadKeys{s}
		for _, sk := range keys {
			if sealing.IsSealed(sk.PrivatePEM) {
				continue
			}
			sealed, err := wk.sealed(sk)
			if err != nil {
				return err
			}
			if err := tx.UpdateSigningKey(sealed); err != nil {
				return err
			}
		}
		computes, err := tx.ListComputes(compute.ComputeFilter{AllWorkspaces: true})
		if err != nil {
			return err
		}
		for _, c := range computes {
			if c.SSHSettings == nil || c.SSHSettings.AdminPassword == "" {
				continue
			}
			h, err := compute.HashAdminPassword(s.cfg.Random, c.SSHSettings.AdminPassword)
			if err != nil {
				return err
			}
			ssh := *c.SSHSettings
			ssh.AdminPassword, ssh.AdminPasswordHash = "", h
			c.SSHSettings = &ssh
			if err := tx.UpdateCompute(c); err != nil {
				return err
			}
		}
		return nil
	})
}

// WorkloadKeys returns the store's signing keys as a workload.KeyStore.
func (s *Service) WorkloadKeys() workload.KeyStore { return workloadKeys{s} }

// SetWorkload installs the workload-token issuer, which needs the services'
// key store and so is made after them.
func (s *Service) SetWorkload(i *workload.Issuer) { s.cfg.Workload = i }

// Workload returns the workload-token issuer.
func (s *Service) Workload() *workload.Issuer { return s.cfg.Workload }

// WorkloadAudiences are the audiences Shoal's API accepts in a workload
// token: the server's URL and the name "shoal".
func (s *Service) WorkloadAudiences() []string {
	u := strings.TrimRight(s.cfg.ServerURL, "/")
	return []string{u, u + "/", "shoal", "api://shoal", "https://shoal"}
}

// ARMAudiences are the audiences the Resource Manager routes accept as
// well: Azure's SDKs in a job ask the identity endpoint for a
// management.azure.com token and send it to Shoal, which stands for
// Resource Manager there (same roles, same audit). Shoal's own routes
// keep refusing them: a token meant for Azure is not one for Shoal.
func (s *Service) ARMAudiences() []string {
	return append(s.WorkloadAudiences(), "https://management.azure.com", "https://management.azure.com/", "https://management.core.windows.net/")
}

// TaskIdentities returns the managed identities a job on compute c may act
// as: the system-assigned one first, then the user-assigned ones.
func TaskIdentities(tx store.Tx, c *compute.Compute) []node.TaskIdentity {
	if c == nil || c.Identity == nil || c.Identity.Type == compute.IdentityNone {
		return nil
	}
	var out []node.TaskIdentity
	if strings.Contains(c.Identity.Type, compute.IdentitySystemAssigned) {
		if id, err := tx.GetIdentity(SystemIdentityName(c.Workspace, c.Name)); err == nil {
			out = append(out, node.TaskIdentity{ClientID: id.ClientID, Name: id.Name})
		}
	}
	for _, u := range c.Identity.UserAssignedIdentities {
		if id, err := tx.GetIdentity(identityNameOf(u.ResourceID)); err == nil {
			out = append(out, node.TaskIdentity{ClientID: id.ClientID, Name: id.Name})
		}
	}
	return out
}

// AuthenticateWorkload resolves a workload token presented to Shoal's API:
// it must verify, be meant for Shoal, and belong to an attempt that is
// still running — a token is worthless once its attempt ends.
func (s *Service) AuthenticateWorkload(ctx context.Context, token string) (*identity.Principal, error) {
	return s.authenticateWorkload(ctx, token, s.WorkloadAudiences())
}

// AuthenticateARMWorkload is AuthenticateWorkload for the Resource
// Manager routes, which accept Resource Manager's audiences too.
func (s *Service) AuthenticateARMWorkload(ctx context.Context, token string) (*identity.Principal, error) {
	return s.authenticateWorkload(ctx, token, s.ARMAudiences())
}

func (s *Service) authenticateWorkload(ctx context.Context, token string, audiences []string) (*identity.Principal, error) {
	if s.cfg.Workload == nil {
		return nil, core.Errorf(core.EUNAUTHORIZED, "the token is not valid")
	}
	c, err := s.cfg.Workload.Verify(ctx, token, audiences)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(c.Subject, "sp:") {
		// A service principal's token (the client-credentials grant) is
		// bound to the service principal, not to a job.
		var p *identity.Principal
		err = s.store.View(ctx, func(tx store.Tx) error {
			p, err = authenticateServicePrincipal(tx, c)
			return err
		})
		return p, err
	}
	var p *identity.Principal
	err = s.store.View(ctx, func(tx store.Tx) error {
		p, err = workloadPrincipal(tx, c)
		return err
	})
	return p, err
}

// workloadPrincipal derives a workload token's principal from the record
// the token is bound to — the job attempt, or the instance's node in its
// current run — and never from the token's own claims: the identity must
// still be one of that compute's, and the submitter (whose rights cap the
// workload's) is the job's or the instance's user as the store says.
func workloadPrincipal(tx store.Tx, c *workload.Claims) (*identity.Principal, error) {
	var comp *compute.Compute
	var onBehalfOf string
	if nodeID, ok := strings.CutPrefix(c.AttemptID, InstanceTokenBinding); ok {
		// An instance's token lives as long as the instance's node, in
		// the run it was minted for: a stop and start makes a new one.
		n, err := tx.GetNode(nodeID)
		if err != nil || n.Role != node.NodeRoleInstance || n.State == node.NodeLeaving || n.State == node.NodeUnusable {
			return nil, core.Errorf(core.EUNAUTHORIZED, "the token's compute instance is no longer running")
		}
		if n.CredentialHash == "" || subtle.ConstantTimeCompare([]byte(c.Binding), []byte(InstanceRunBinding(n))) != 1 {
			return nil, core.Errorf(core.EUNAUTHORIZED, "the token was minted for an earlier run of its compute instance")
		}
		if comp, err = tx.GetCompute(n.Workspace, n.Compute); err != nil || comp.Instance == nil {
			return nil, core.Errorf(core.EUNAUTHORIZED, "the token's compute instance is no longer running")
		}
		onBehalfOf = comp.Instance.AssignedUser
	} else {
		a, err := tx.GetAttempt(c.AttemptID)
		if err != nil {
			return nil, core.Errorf(core.EUNAUTHORIZED, "the token's job attempt is unknown")
		}
		j, err := tx.GetJob(a.Workspace, a.JobName)
		if err != nil || j.CurrentAttemptID != a.ID || job.AttemptTerminal(a.Status) {
			return nil, core.Errorf(core.EUNAUTHORIZED, "the token's job attempt has ended")
		}
		if comp, err = tx.GetCompute(j.Workspace, j.Compute); err != nil {
			return nil, core.Errorf(core.EUNAUTHORIZED, "the token's compute %s is gone", j.Compute)
		}
		if strings.HasPrefix(c.Subject, userSubjectPrefix) {
			// user_identity: the submitter itself, for this attempt only.
			p, err := userIdentityPrincipal(j, c.Subject, c.ClientID, c.AttemptID)
			if err == nil && !c.ExpiresAt.IsZero() {
				exp := c.ExpiresAt
				p.ExpiresOn = &exp
			}
			return p, err
		}
		onBehalfOf = j.CreatedByPrincipal
		if j.Identity != nil {
			// The identities the job may act as now, by its identity:
			// aml_token's none, managed's the one it names.
			id, ok := tokenIdentity(JobIdentities(tx, comp, j), c)
			if !ok {
				return nil, core.Errorf(core.EUNAUTHORIZED, "the token's identity %s is not one its job may act as", c.Subject)
			}
			return &identity.Principal{ID: "identity:" + id.Name, Name: "identity " + id.Name, Kind: identity.PrincipalIdentity, OnBehalfOf: onBehalfOf, AttemptID: c.AttemptID}, nil
		}
	}
	id, ok := tokenIdentity(TaskIdentities(tx, comp), c)
	if !ok {
		return nil, core.Errorf(core.EUNAUTHORIZED, "the token's identity %s is not a managed identity of compute %s", c.Subject, comp.Name)
	}
	return &identity.Principal{ID: "identity:" + id.Name, Name: "identity " + id.Name, Kind: identity.PrincipalIdentity, OnBehalfOf: onBehalfOf, AttemptID: c.AttemptID}, nil
}

// tokenIdentity finds the identity a token names among a compute's: its
// client ID and its subject must both be that identity's.
func tokenIdentity(ids []node.TaskIdentity, c *workload.Claims) (node.TaskIdentity, bool) {
	if c.ClientID == "" {
		return node.TaskIdentity{}, false
	}
	for _, id := range ids {
		if strings.EqualFold(id.ClientID, c.ClientID) && c.Subject == "identity:"+id.Name {
			return id, true
		}
	}
	return node.TaskIdentity{}, false
}

// InstanceRunBinding names an instance node's current run: it is derived
// from the node credential its agent got when it joined, which every
// start makes anew, so a token minted before a stop is refused after the
// next start although the node's ID is the same.
func InstanceRunBinding(n *node.Node) string {
	return tokenBinding("instance-run", n.CredentialHash)
}

// tokenBinding derives a token's binding from a record's secret hash
// (never the hash itself: tokens are readable by the workload).
func tokenBinding(kind, secretHash string) string {
	sum := sha256.Sum256([]byte("shoal token binding\x00" + kind + "\x00" + secretHash))
	return hex.EncodeToString(sum[:16])
}

// InstanceTokenBinding prefixes the node ID an instance's workload token
// is bound to (in place of a job attempt).
const InstanceTokenBinding = "instance-node:"

// ChooseIdentity picks the identity a token request names by client ID,
// or the first (the default) when it names none.
func ChooseIdentity(ids []node.TaskIdentity, clientID, what string) (node.TaskIdentity, error) {
	if len(ids) == 0 {
		return node.TaskIdentity{}, core.Errorf(core.EFORBIDDEN, "%s has no managed identity", what)
	}
	if clientID == "" {
		return ids[0], nil
	}
	for _, id := range ids {
		if strings.EqualFold(id.ClientID, clientID) {
			return id, nil
		}
	}
	return node.TaskIdentity{}, core.FieldErrorf("client_id", "%q is not an identity of %s", clientID, what)
}

// MintToken signs claims and answers in the MSI endpoint's shape.
func (s *Service) MintToken(ctx context.Context, claims workload.Claims) (*node.TokenResponse, error) {
	tok, exp, err := s.cfg.Workload.Mint(ctx, claims, WorkloadTokenTTL)
	if err != nil {
		return nil, err
	}
	return &node.TokenResponse{
		AccessToken: tok, ExpiresOn: strconv.FormatInt(exp.Unix(), 10),
		ExpiresIn: strconv.FormatInt(int64(time.Until(exp).Seconds()), 10),
		Resource:  claims.Audience, TokenType: "Bearer", ClientID: claims.ClientID,
	}, nil
}

// ScoringAudiences are the audiences a batch endpoint's scoring URI
// accepts: Shoal's and Resource Manager's, and Azure ML's data plane
// (https://ml.azure.com), which ml_client.batch_endpoints.invoke asks
// for, as Azure's scoring URIs take. No other route accepts Azure ML's.
func (s *Service) ScoringAudiences() []string {
	out := s.ARMAudiences()
	for a := range mlAudiences {
		out = append(out, a, a+"/")
	}
	return out
}

// AuthenticateScoringWorkload is AuthenticateWorkload for a batch
// endpoint's scoring URI (ScoringAudiences).
func (s *Service) AuthenticateScoringWorkload(ctx context.Context, token string) (*identity.Principal, error) {
	return s.authenticateWorkload(ctx, token, s.ScoringAudiences())
}
