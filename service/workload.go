package service

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/workload"
)

// WorkloadTokenTTL is the lifetime of a workload token (the MSI endpoint's
// tokens); the issuer caps it at an hour.
const WorkloadTokenTTL = time.Hour

// workloadKeys adapts the store to workload.KeyStore.
type workloadKeys struct{ s *Services }

// ListKeys implements workload.KeyStore.
func (k workloadKeys) ListKeys(ctx context.Context) (out []*shoal.SigningKey, err error) {
	err = k.s.store.View(ctx, func(tx shoal.Tx) error {
		out, err = tx.ListSigningKeys()
		return err
	})
	return out, err
}

// InsertKey implements workload.KeyStore.
func (k workloadKeys) InsertKey(ctx context.Context, key *shoal.SigningKey) error {
	return k.s.store.Update(ctx, func(tx shoal.Tx) error { return tx.InsertSigningKey(key) })
}

// UpdateKey implements workload.KeyStore.
func (k workloadKeys) UpdateKey(ctx context.Context, key *shoal.SigningKey) error {
	return k.s.store.Update(ctx, func(tx shoal.Tx) error { return tx.UpdateSigningKey(key) })
}

// WorkloadKeys returns the store's signing keys as a workload.KeyStore.
func (s *Services) WorkloadKeys() workload.KeyStore { return workloadKeys{s} }

// SetWorkload installs the workload-token issuer, which needs the services'
// key store and so is made after them.
func (s *Services) SetWorkload(i *workload.Issuer) { s.cfg.Workload = i }

// Workload returns the workload-token issuer.
func (s *Services) Workload() *workload.Issuer { return s.cfg.Workload }

// WorkloadAudiences are the audiences Shoal's API accepts in a workload
// token: the server's URL and the name "shoal".
func (s *Services) WorkloadAudiences() []string {
	u := strings.TrimRight(s.cfg.ServerURL, "/")
	return []string{u, u + "/", "shoal", "api://shoal", "https://shoal"}
}

// ARMAudiences are the audiences the Resource Manager routes accept as
// well: Azure's SDKs in a job ask the identity endpoint for a
// management.azure.com token and send it to Shoal, which stands for
// Resource Manager there (same roles, same audit). Shoal's own routes
// keep refusing them: a token meant for Azure is not one for Shoal.
func (s *Services) ARMAudiences() []string {
	return append(s.WorkloadAudiences(), "https://management.azure.com", "https://management.azure.com/", "https://management.core.windows.net/")
}

// taskIdentities returns the managed identities a job on compute c may act
// as: the system-assigned one first, then the user-assigned ones.
func taskIdentities(tx shoal.Tx, c *shoal.Compute) []shoal.TaskIdentity {
	if c == nil || c.Identity == nil || c.Identity.Type == shoal.IdentityNone {
		return nil
	}
	var out []shoal.TaskIdentity
	if strings.Contains(c.Identity.Type, shoal.IdentitySystemAssigned) {
		if id, err := tx.GetIdentity(systemIdentityName(c.Workspace, c.Name)); err == nil {
			out = append(out, shoal.TaskIdentity{ClientID: id.ClientID, Name: id.Name})
		}
	}
	for _, u := range c.Identity.UserAssignedIdentities {
		if id, err := tx.GetIdentity(identityNameOf(u.ResourceID)); err == nil {
			out = append(out, shoal.TaskIdentity{ClientID: id.ClientID, Name: id.Name})
		}
	}
	return out
}

// MintWorkloadToken mints a token for the job running as a rank on a node:
// the node must run that rank of the job's current attempt, the attempt
// must not have ended, and the identity must be one of the compute's.
func (s *Services) MintWorkloadToken(ctx context.Context, nodeID, attemptID string, rank int, req *shoal.TokenRequest) (*shoal.TokenResponse, error) {
	if s.cfg.Workload == nil {
		return nil, shoal.Errorf(shoal.ENOTIMPLEMENTED, "this server issues no workload tokens")
	}
	if strings.TrimSpace(req.Resource) == "" {
		return nil, shoal.FieldErrorf("resource", "is required")
	}
	var claims workload.Claims
	err := s.store.View(ctx, func(tx shoal.Tx) error {
		w, err := loadRankWork(tx, nodeID, attemptID, rank)
		if err != nil {
			return err
		}
		a, rs, j := w.attempt, w.rank, w.job
		if j.CurrentAttemptID != a.ID || shoal.AttemptTerminal(a.Status) || shoal.AttemptTerminal(rs.Status) {
			return shoal.Errorf(shoal.EFORBIDDEN, "attempt %s has ended: it gets no more tokens", a.ID)
		}
		c, err := tx.GetCompute(j.Workspace, j.Compute)
		if err != nil {
			return err
		}
		chosen, err := chooseIdentity(taskIdentities(tx, c), req.ClientID, "compute "+c.Name)
		if err != nil {
			return err
		}
		claims = workload.Claims{
			Subject: "identity:" + chosen.Name, Audience: req.Resource, ClientID: chosen.ClientID,
			AttemptID: a.ID, Job: j.Workspace + "/" + j.Name, Submitter: j.CreatedByPrincipal,
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.mintToken(ctx, claims)
}

// AuthenticateWorkload resolves a workload token presented to Shoal's API:
// it must verify, be meant for Shoal, and belong to an attempt that is
// still running — a token is worthless once its attempt ends.
func (s *Services) AuthenticateWorkload(ctx context.Context, token string) (*shoal.Principal, error) {
	return s.authenticateWorkload(ctx, token, s.WorkloadAudiences())
}

// AuthenticateARMWorkload is AuthenticateWorkload for the Resource
// Manager routes, which accept Resource Manager's audiences too.
func (s *Services) AuthenticateARMWorkload(ctx context.Context, token string) (*shoal.Principal, error) {
	return s.authenticateWorkload(ctx, token, s.ARMAudiences())
}

func (s *Services) authenticateWorkload(ctx context.Context, token string, audiences []string) (*shoal.Principal, error) {
	if s.cfg.Workload == nil {
		return nil, shoal.Errorf(shoal.EUNAUTHORIZED, "the token is not valid")
	}
	c, err := s.cfg.Workload.Verify(ctx, token, audiences)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(c.Subject, "sp:") {
		// A service principal's token (the client-credentials grant) is
		// bound to the service principal, not to a job.
		var p *shoal.Principal
		err = s.store.View(ctx, func(tx shoal.Tx) error {
			p, err = authenticateServicePrincipal(tx, c)
			return err
		})
		return p, err
	}
	err = s.store.View(ctx, func(tx shoal.Tx) error {
		if nodeID, ok := strings.CutPrefix(c.AttemptID, instanceTokenBinding); ok {
			// An instance's token lives as long as the instance's node.
			n, err := tx.GetNode(nodeID)
			if err != nil || n.Role != shoal.NodeRoleInstance || n.State == shoal.NodeLeaving || n.State == shoal.NodeUnusable {
				return shoal.Errorf(shoal.EUNAUTHORIZED, "the token's compute instance is no longer running")
			}
			return nil
		}
		a, err := tx.GetAttempt(c.AttemptID)
		if err != nil {
			return shoal.Errorf(shoal.EUNAUTHORIZED, "the token's job attempt is unknown")
		}
		j, err := tx.GetJob(a.Workspace, a.JobName)
		if err != nil || j.CurrentAttemptID != a.ID || shoal.AttemptTerminal(a.Status) {
			return shoal.Errorf(shoal.EUNAUTHORIZED, "the token's job attempt has ended")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	name := strings.TrimPrefix(c.Subject, "identity:")
	return &shoal.Principal{ID: c.Subject, Name: "identity " + name, Kind: shoal.PrincipalIdentity, OnBehalfOf: c.Submitter, AttemptID: c.AttemptID}, nil
}

// instanceTokenBinding prefixes the node ID an instance's workload token
// is bound to (in place of a job attempt).
const instanceTokenBinding = "instance-node:"

// MintInstanceToken mints a token for the user's shells and notebooks on
// a compute instance: the node must be the instance's own, and the
// identity one of the instance's. The token acts for the instance's user
// and never for more than that user may do; it dies with the node.
func (s *Services) MintInstanceToken(ctx context.Context, nodeID string, req *shoal.TokenRequest) (*shoal.TokenResponse, error) {
	if s.cfg.Workload == nil {
		return nil, shoal.Errorf(shoal.ENOTIMPLEMENTED, "this server issues no workload tokens")
	}
	if strings.TrimSpace(req.Resource) == "" {
		return nil, shoal.FieldErrorf("resource", "is required")
	}
	var claims workload.Claims
	err := s.store.View(ctx, func(tx shoal.Tx) error {
		n, err := tx.GetNode(nodeID)
		if err != nil {
			return err
		}
		if n.Role != shoal.NodeRoleInstance {
			return shoal.Errorf(shoal.EFORBIDDEN, "node %s is not a compute instance", nodeID)
		}
		c, err := tx.GetCompute(n.Workspace, n.Compute)
		if err != nil {
			return err
		}
		chosen, err := chooseIdentity(taskIdentities(tx, c), req.ClientID, "compute instance "+c.Name)
		if err != nil {
			return err
		}
		owner := ""
		if c.Instance != nil {
			owner = c.Instance.AssignedUser
		}
		claims = workload.Claims{
			Subject: "identity:" + chosen.Name, Audience: req.Resource, ClientID: chosen.ClientID,
			AttemptID: instanceTokenBinding + n.ID, Job: c.Workspace + "/" + c.Name, Submitter: owner,
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.mintToken(ctx, claims)
}

// chooseIdentity picks the identity a token request names by client ID,
// or the first (the default) when it names none.
func chooseIdentity(ids []shoal.TaskIdentity, clientID, what string) (shoal.TaskIdentity, error) {
	if len(ids) == 0 {
		return shoal.TaskIdentity{}, shoal.Errorf(shoal.EFORBIDDEN, "%s has no managed identity", what)
	}
	if clientID == "" {
		return ids[0], nil
	}
	for _, id := range ids {
		if strings.EqualFold(id.ClientID, clientID) {
			return id, nil
		}
	}
	return shoal.TaskIdentity{}, shoal.FieldErrorf("client_id", "%q is not an identity of %s", clientID, what)
}

// mintToken signs claims and answers in the MSI endpoint's shape.
func (s *Services) mintToken(ctx context.Context, claims workload.Claims) (*shoal.TokenResponse, error) {
	tok, exp, err := s.cfg.Workload.Mint(ctx, claims, WorkloadTokenTTL)
	if err != nil {
		return nil, err
	}
	return &shoal.TokenResponse{
		AccessToken: tok, ExpiresOn: strconv.FormatInt(exp.Unix(), 10),
		ExpiresIn: strconv.FormatInt(int64(time.Until(exp).Seconds()), 10),
		Resource:  claims.Audience, TokenType: "Bearer", ClientID: claims.ClientID,
	}, nil
}
