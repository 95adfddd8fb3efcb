package service

import (
	"context"
	"encoding/hex"
	"strconv"

	"github.com/shoal-ml/shoal/decide/jobservice"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/interactive"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/computes"
	"github.com/shoal-ml/shoal/store"
)

// A job's services are served by the nodes of its ranks while they run
// and reached through the application proxy, as an instance's
// applications are: only by the job's submitter, only while the job
// runs, and only when the listener is a process of the job's own rank.
// What is decided is decide/jobservice's; this reads the store and mints
// Jupyter's tokens.

// serviceTokenPurpose separates the services' tokens from the key's other
// MACs.
const serviceTokenPurpose = "shoal job service token"

// jobServiceToken is the token of a job's Jupyter on one node of an
// attempt: derived under the server's secrets key, so nothing is stored
// and every replica's proxy sends the same; "" when the server has no
// key.
func (s *Services) jobServiceToken(attemptID string) func(nodeIndex int, svc string) string {
	return func(nodeIndex int, svc string) string {
		if s.cfg.SecretsKey == nil {
			return ""
		}
		return hex.EncodeToString(s.cfg.SecretsKey.MAC(serviceTokenPurpose, []byte(attemptID+"/"+strconv.Itoa(nodeIndex)+"/"+svc)))
	}
}

// withServices fills the shown state of j's services from its current
// attempt's ranks.
func (s *Services) withServices(tx store.Tx, j *job.Job) error {
	if j == nil || len(j.Services) == 0 {
		return nil
	}
	var a *job.Attempt
	if j.CurrentAttemptID != "" {
		var err error
		if a, err = tx.GetAttempt(j.CurrentAttemptID); err != nil && core.ErrorCode(err) != core.ENOTFOUND {
			return err
		}
	}
	jobservice.View(s.cfg.AppsURL, j, a)
	return nil
}

// ResolveJobService checks that the caller may reach a job's service on
// node index nodeIndex (jobservice.Reach: its submitter in person, while
// it runs and listens) and returns where the proxy sends the request and
// whose process must hold the listener. Returns ENOTFOUND, EFORBIDDEN,
// ECONFLICT (not running), EUNAVAILABLE (not listening yet).
func (s *Services) ResolveJobService(ctx context.Context, workspace, jobName string, nodeIndex int, svc string) (*computes.InstanceAppTarget, error) {
	var t *computes.InstanceAppTarget
	err := s.store.View(ctx, func(tx store.Tx) error {
		j, err := s.getJob(tx, workspace, jobName)
		if err != nil {
			return err
		}
		var a *job.Attempt
		if j.CurrentAttemptID != "" {
			if a, err = tx.GetAttempt(j.CurrentAttemptID); err != nil {
				return err
			}
		}
		inst, err := jobservice.Reach(identity.PrincipalFrom(ctx), j, a, nodeIndex, svc)
		if err != nil {
			return err
		}
		t = &computes.InstanceAppTarget{Addr: inst.Addr, BasePath: jobservice.Path(j.Workspace, j.Name, nodeIndex, svc),
			StripPrefix: inst.Type == interactive.ServiceCustom, ListenerOwner: inst.ListenerOwner,
			Mark: s.rankMark(tx, a.Ranks[nodeIndex], a)}
		if inst.Type == interactive.ServiceJupyterLab {
			t.Token = s.jobServiceToken(a.ID)(nodeIndex, svc)
		}
		return nil
	})
	return t, err
}

// rankMark is the environment mark of rank rs's processes: its node's
// (when its provider can tell) and the attempt's and rank's own, so that
// another job's process on the same node is not taken for the rank's.
func (s *Services) rankMark(tx store.Tx, rs *job.RankStatus, a *job.Attempt) []string {
	n, err := tx.GetNode(rs.NodeID)
	if err != nil {
		return nil
	}
	loc, err := s.catalog.Location(n.Location)
	if err != nil {
		return nil
	}
	m, ok := s.Provider(loc).(node.NodeMarker)
	if !ok {
		return nil
	}
	mark := m.NodeMark(n)
	if len(mark) == 0 {
		return nil
	}
	return append(mark, "SHOAL_ATTEMPT_ID="+a.ID, "SHOAL_NODE_RANK="+strconv.Itoa(rs.Rank))
}
