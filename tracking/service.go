package tracking

import (
	"context"
	"strings"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/internal/sealing"
)

// Config builds a Service.
type Config struct {
	// Store keeps the runs' data.
	Store shoal.Store
	// Authorizer decides what users may do in a workspace.
	Authorizer shoal.Authorizer
	// Key derives and checks the tracking tokens (the server's secrets
	// key); nil: no token is valid and jobs get none.
	Key *sealing.Key
}

// Service reads and writes jobs' runs.
type Service struct {
	store shoal.Store
	auth  shoal.Authorizer
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
func (s *Service) mayRead(ctx context.Context, p *shoal.Principal, ws, job string) error {
	return s.may(ctx, p, ws, job, shoal.ActJobsRead)
}

// mayWrite checks that p may write the run of job in workspace ws.
func (s *Service) mayWrite(ctx context.Context, p *shoal.Principal, ws, job string) error {
	return s.may(ctx, p, ws, job, shoal.ActJobsWrite)
}

func (s *Service) may(ctx context.Context, p *shoal.Principal, ws, job, action string) error {
	if p != nil && p.Kind == shoal.PrincipalJobRun {
		rws, rjob := runOf(p)
		if !strings.EqualFold(rws, ws) || rjob != job {
			return shoal.Errorf(shoal.EFORBIDDEN, "the tracking token of job %s reaches only that job's run, not run %s", rjob, job)
		}
		return nil
	}
	return s.auth.Authorize(ctx, p, ws, action)
}

// mayReadExperiment checks that p may read experiment name of ws: a job's
// run its own only. It reads the store on its own: call it outside a
// transaction.
func (s *Service) mayReadExperiment(ctx context.Context, p *shoal.Principal, ws, name string) error {
	if p == nil || p.Kind != shoal.PrincipalJobRun {
		return s.auth.Authorize(ctx, p, ws, shoal.ActJobsRead)
	}
	own, err := s.ownExperiment(ctx, p)
	if err != nil {
		return err
	}
	if rws, rjob := runOf(p); !strings.EqualFold(rws, ws) || !strings.EqualFold(own, name) {
		return shoal.Errorf(shoal.EFORBIDDEN, "the tracking token of job %s reaches only its experiment %s", rjob, own)
	}
	return nil
}

// ownExperiment is the experiment of a job run principal's job.
func (s *Service) ownExperiment(ctx context.Context, p *shoal.Principal) (string, error) {
	rws, rjob := runOf(p)
	var name string
	err := s.store.View(ctx, func(tx shoal.Tx) error {
		j, err := tx.GetJob(rws, rjob)
		if err == nil {
			name = ExperimentOf(j)
		}
		return err
	})
	return name, err
}

// ExperimentOf is a job's experiment: its experiment_name or Default.
func ExperimentOf(j *shoal.Job) string {
	if j.ExperimentName != "" {
		return j.ExperimentName
	}
	return shoal.DefaultExperiment
}

// jobRun reads the job of a run ID (the job's name) in ws: ENOTFOUND
// names the run.
func jobRun(tx shoal.Tx, ws, runID string) (*shoal.Job, error) {
	if runID == "" {
		return nil, shoal.FieldErrorf("run_id", "is required")
	}
	j, err := tx.GetJob(ws, runID)
	if shoal.ErrorCode(err) == shoal.ENOTFOUND {
		return nil, shoal.Errorf(shoal.ENOTFOUND, "run %s is not a job of workspace %s", runID, ws)
	}
	return j, err
}
