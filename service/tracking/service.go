package tracking

import (
	"context"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/store"
)

// Config builds a Service.
type Config struct {
	// Store keeps the runs' data.
	Store store.Store
	// Authorizer decides what users may do in a workspace.
	Authorizer identity.Authorizer
	// Key derives and checks the tracking tokens (the server's secrets
	// key); nil: no token is valid and jobs get none.
	Key *sealing.Key
}

// Service reads and writes jobs' runs.
type Service struct {
	store store.Store
	auth  identity.Authorizer
	key   *sealing.Key
}

// New returns a Service.
func New(cfg Config) *Service {
	return &Service{store: cfg.Store, auth: cfg.Authorizer, key: cfg.Key}
}

// Enabled reports whether the server mints tracking tokens.
func (s *Service) Enabled() bool { return s.key != nil }

// TokenFor returns the tracking token of an attempt ("" when disabled).
func (s *Service) TokenFor(attemptID string) string {
	if s.key == nil {
		return ""
	}
	return Token(s.key, attemptID)
}

// The rule of who may do what with a run:
//   - a job's attempt, with its tracking token, reads and writes its own
//     run and reads its own experiment, nothing else;
//   - a user (or service principal, or workload identity) reads runs and
//     experiments with jobs/read in the workspace (Reader and up) and
//     writes them with jobs/write (Contributor and up: those who may
//     submit jobs there).

// mayRead checks that p may read the run of job in workspace ws.
func (s *Service) mayRead(ctx context.Context, p *identity.Principal, ws, job string) error {
	return s.may(ctx, p, ws, job, identity.ActJobsRead)
}

// mayWrite checks that p may write the run of job in workspace ws.
func (s *Service) mayWrite(ctx context.Context, p *identity.Principal, ws, job string) error {
	return s.may(ctx, p, ws, job, identity.ActJobsWrite)
}

func (s *Service) may(ctx context.Context, p *identity.Principal, ws, job, action string) error {
	if p != nil && p.Kind == identity.PrincipalJobRun {
		rws, rjob := runOf(p)
		if !strings.EqualFold(rws, ws) || rjob != job {
			return core.Errorf(core.EFORBIDDEN, "the tracking token of job %s reaches only that job's run, not run %s", rjob, job)
		}
		return nil
	}
	return s.auth.Authorize(ctx, p, ws, action)
}

// mayReadExperiment checks that p may read experiment name of ws: a job's
// run its own only. It reads the store on its own: call it outside a
// transaction.
func (s *Service) mayReadExperiment(ctx context.Context, p *identity.Principal, ws, name string) error {
	if p == nil || p.Kind != identity.PrincipalJobRun {
		return s.auth.Authorize(ctx, p, ws, identity.ActJobsRead)
	}
	own, err := s.ownExperiment(ctx, p)
	if err != nil {
		return err
	}
	if rws, rjob := runOf(p); !strings.EqualFold(rws, ws) || !strings.EqualFold(own, name) {
		return core.Errorf(core.EFORBIDDEN, "the tracking token of job %s reaches only its experiment %s", rjob, own)
	}
	return nil
}

// ownExperiment is the experiment of a job run principal's job.
func (s *Service) ownExperiment(ctx context.Context, p *identity.Principal) (string, error) {
	rws, rjob := runOf(p)
	var name string
	err := s.store.View(ctx, func(tx store.Tx) error {
		j, err := tx.GetJob(rws, rjob)
		if err == nil {
			name = ExperimentOf(j)
		}
		return err
	})
	return name, err
}

// ExperimentOf is a job's experiment: its experiment_name or Default.
func ExperimentOf(j *job.Job) string {
	if j.ExperimentName != "" {
		return j.ExperimentName
	}
	return mlflowrun.DefaultExperiment
}

// jobRun reads the job of a run ID (the job's name) in ws: ENOTFOUND
// names the run.
func jobRun(tx store.Tx, ws, runID string) (*job.Job, error) {
	if runID == "" {
		return nil, core.FieldErrorf("run_id", "is required")
	}
	j, err := tx.GetJob(ws, runID)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, core.Errorf(core.ENOTFOUND, "run %s is not a job of workspace %s", runID, ws)
	}
	return j, err
}
