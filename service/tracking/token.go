// Package tracking answers what jobs log through MLflow's tracking API
// (metrics, parameters, tags) and who may read and write it: a job's
// attempt with the tracking token it was given at dispatch, and users by
// their workspace roles. The HTTP face in MLflow's shape is api/mlflow.
package tracking

import (
	"context"
	"crypto/hmac"
	"encoding/hex"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/store"
)

// tokenPrefix starts every tracking token, so the API tells it from an
// API token or a workload JWT without trying each.
const tokenPrefix = "shoalrun_"

// macPurpose separates tracking tokens from any other MAC of the key.
const macPurpose = "mlflow-tracking-token"

// IsToken reports whether a bearer credential is a tracking token.
func IsToken(s string) bool { return strings.HasPrefix(s, tokenPrefix) }

// Token returns the tracking token of an attempt: its ID and a MAC of it
// under the server's secrets key. Nothing is stored: every replica with
// the key derives and checks the same token, and the attempt's end (read
// from the store) is what revokes it.
func Token(key *sealing.Key, attemptID string) string {
	return tokenPrefix + attemptID + "_" + hex.EncodeToString(key.MAC(macPurpose, []byte(attemptID)))
}

// runPrincipalPrefix starts a job run principal's ID: run:<ws>/<job>.
const runPrincipalPrefix = "run:"

// Authenticate checks a tracking token and returns the principal of the
// job's run it was minted for: EUNAUTHORIZED for a token that is not one
// of this server's, or whose attempt ended or was replaced.
func (s *Service) Authenticate(ctx context.Context, token string) (*identity.Principal, error) {
	bad := core.Errorf(core.EUNAUTHORIZED, "the tracking token is not valid (MLFLOW_TRACKING_TOKEN is given to a job's attempt by the server)")
	if s.key == nil {
		return nil, bad
	}
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	i := strings.LastIndexByte(rest, '_')
	if !ok || i <= 0 {
		return nil, bad
	}
	attemptID := rest[:i]
	if !hmac.Equal([]byte(token), []byte(Token(s.key, attemptID))) {
		return nil, bad
	}
	var p *identity.Principal
	err := s.store.View(ctx, func(tx store.Tx) error {
		a, err := tx.GetAttempt(attemptID)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return bad
		} else if err != nil {
			return err
		}
		j, err := tx.GetJob(a.Workspace, a.JobName)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return bad
		} else if err != nil {
			return err
		}
		if job.AttemptTerminal(a.Status) || j.CurrentAttemptID != a.ID {
			return core.Errorf(core.EUNAUTHORIZED, "attempt %d of job %s has ended: its tracking token is no longer valid", a.Number, j.Name)
		}
		p = &identity.Principal{
			ID: runPrincipalPrefix + j.Workspace + "/" + j.Name, Name: "job " + j.Name, Kind: identity.PrincipalJobRun,
			AttemptID: a.ID, OnBehalfOf: j.CreatedByPrincipal,
		}
		return nil
	})
	return p, err
}

// runOf returns the workspace and job a job run principal writes.
func runOf(p *identity.Principal) (workspace, job string) {
	ws, job, _ := strings.Cut(strings.TrimPrefix(p.ID, runPrincipalPrefix), "/")
	return ws, job
}
