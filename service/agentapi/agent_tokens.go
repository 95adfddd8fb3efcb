package agentapi

import (
	"context"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/workload"
	"github.com/shoal-ml/shoal/service/access"
	"github.com/shoal-ml/shoal/service/computes"
	"github.com/shoal-ml/shoal/store"
)

// MintWorkloadToken mints a token for the job running as a rank on a node:
// the node must run that rank of the job's current attempt, the attempt
// must not have ended, and the identity must be one of the compute's.
func (s *Server) MintWorkloadToken(ctx context.Context, nodeID, attemptID string, rank int, req *node.TokenRequest) (*node.TokenResponse, error) {
	if s.tokens.Workload() == nil {
		return nil, core.Errorf(core.ENOTIMPLEMENTED, "this server issues no workload tokens")
	}
	if strings.TrimSpace(req.Resource) == "" {
		return nil, core.FieldErrorf("resource", "is required")
	}
	var claims workload.Claims
	err := s.store.View(ctx, func(tx store.Tx) error {
		w, err := LoadRankWork(tx, nodeID, attemptID, rank)
		if err != nil {
			return err
		}
		a, rs, j := w.Attempt, w.Rank, w.Job
		if j.CurrentAttemptID != a.ID || job.AttemptTerminal(a.Status) || job.AttemptTerminal(rs.Status) {
			return core.Errorf(core.EFORBIDDEN, "attempt %s has ended: it gets no more tokens", a.ID)
		}
		c, err := tx.GetCompute(j.Workspace, j.Compute)
		if err != nil {
			return err
		}
		what := "compute " + c.Name
		if j.Identity != nil {
			what = "job " + j.Name + " (identity " + j.Identity.Type + ") on compute " + c.Name
		}
		chosen, err := access.ChooseIdentity(access.JobIdentities(tx, c, j), req.ClientID, what)
		if err != nil {
			return err
		}
		// The token carries its binding (the attempt) and the identity
		// for verifiers outside Shoal; Shoal itself derives the submitter
		// from the attempt's job when the token comes back.
		claims = workload.Claims{
			Subject: access.JobTokenSubject(j, chosen), Audience: req.Resource, ClientID: chosen.ClientID,
			AttemptID: a.ID, Job: j.Workspace + "/" + j.Name,
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.tokens.MintToken(ctx, claims)
}

// MintInstanceToken mints a token for the user's shells and notebooks on
// a compute instance: the node must be the instance's own, and the
// identity one of the instance's. The token acts for the instance's user
// and never for more than that user may do; it dies with the node.
func (s *Server) MintInstanceToken(ctx context.Context, nodeID string, req *node.TokenRequest) (*node.TokenResponse, error) {
	if s.tokens.Workload() == nil {
		return nil, core.Errorf(core.ENOTIMPLEMENTED, "this server issues no workload tokens")
	}
	if strings.TrimSpace(req.Resource) == "" {
		return nil, core.FieldErrorf("resource", "is required")
	}
	var claims workload.Claims
	err := s.store.View(ctx, func(tx store.Tx) error {
		n, err := computes.InstanceNode(tx, nodeID)
		if err != nil {
			return err
		}
		c, err := tx.GetCompute(n.Workspace, n.Compute)
		if err != nil {
			return err
		}
		chosen, err := access.ChooseIdentity(access.TaskIdentities(tx, c), req.ClientID, "compute instance "+c.Name)
		if err != nil {
			return err
		}
		if n.CredentialHash == "" {
			return core.Errorf(core.EFORBIDDEN, "node %s has not joined", nodeID)
		}
		claims = workload.Claims{
			Subject: "identity:" + chosen.Name, Audience: req.Resource, ClientID: chosen.ClientID,
			AttemptID: access.InstanceTokenBinding + n.ID, Binding: access.InstanceRunBinding(n), Job: c.Workspace + "/" + c.Name,
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.tokens.MintToken(ctx, claims)
}
