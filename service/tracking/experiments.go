package tracking

import (
	"context"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/store"
)

// An experiment's ID is its name: jobs name their experiment
// (experiment_name), and a name is unique in a workspace. An experiment
// is recorded when first asked for by its job's run, by a user reading
// Default, or created by a user.

// GetExperiment returns experiment name (or ID) of ws: ENOTFOUND when no
// run and no user recorded it yet (Default and a job's own experiment are
// recorded on first read).
func (s *Service) GetExperiment(ctx context.Context, p *identity.Principal, ws, name string) (*mlflowrun.Experiment, error) {
	if name == "" {
		return nil, core.FieldErrorf("experiment_name", "is required")
	}
	if err := s.mayReadExperiment(ctx, p, ws, name); err != nil {
		return nil, err
	}
	// Past mayReadExperiment a job's run asks for its own experiment.
	ensure := strings.EqualFold(name, mlflowrun.DefaultExperiment) || (p != nil && p.Kind == identity.PrincipalJobRun)
	var e *mlflowrun.Experiment
	err := s.store.Update(ctx, func(tx store.Tx) (err error) {
		e, err = getOrEnsure(tx, ws, name, ensure)
		return err
	})
	return e, err
}

// getOrEnsure reads an experiment, recording it first when ensure.
func getOrEnsure(tx store.Tx, ws, name string, ensure bool) (*mlflowrun.Experiment, error) {
	e, err := tx.GetExperiment(ws, name)
	if core.ErrorCode(err) != core.ENOTFOUND || !ensure {
		return e, err
	}
	w, err := tx.GetWorkspace(ws)
	if err != nil {
		return nil, err
	}
	e = &mlflowrun.Experiment{Workspace: w.Name, Name: name}
	return e, tx.InsertExperiment(e)
}

// CreateExperiment records an experiment of ws. Users need jobs/write; a
// job's run may not create one (its experiment is its job's, which
// exists): ECONFLICT for its own, EFORBIDDEN for any other.
func (s *Service) CreateExperiment(ctx context.Context, p *identity.Principal, ws, name string) (*mlflowrun.Experiment, error) {
	if err := job.ValidateJobName(name); err != nil {
		return nil, err
	}
	if p != nil && p.Kind == identity.PrincipalJobRun {
		if _, err := s.GetExperiment(ctx, p, ws, name); err != nil {
			return nil, err
		}
		return nil, core.Errorf(core.ECONFLICT, "experiment %s already exists in workspace %s", name, ws)
	}
	if err := s.auth.Authorize(ctx, p, ws, identity.ActJobsWrite); err != nil {
		return nil, err
	}
	e := &mlflowrun.Experiment{Workspace: ws, Name: name}
	if err := s.store.Update(ctx, func(tx store.Tx) error { return tx.InsertExperiment(e) }); err != nil {
		return nil, err
	}
	return e, nil
}

// ListExperiments returns the experiments p may read in ws: a job's run
// its own, a user (jobs/read) every recorded one, Default included.
func (s *Service) ListExperiments(ctx context.Context, p *identity.Principal, ws string) ([]*mlflowrun.Experiment, error) {
	if p != nil && p.Kind == identity.PrincipalJobRun {
		own, err := s.ownExperiment(ctx, p)
		if err != nil {
			return nil, err
		}
		e, err := s.GetExperiment(ctx, p, ws, own)
		if err != nil {
			return nil, err
		}
		return []*mlflowrun.Experiment{e}, nil
	}
	if err := s.auth.Authorize(ctx, p, ws, identity.ActJobsRead); err != nil {
		return nil, err
	}
	var out []*mlflowrun.Experiment
	err := s.store.Update(ctx, func(tx store.Tx) error {
		if _, err := getOrEnsure(tx, ws, mlflowrun.DefaultExperiment, true); err != nil {
			return err
		}
		var err error
		out, err = tx.ListExperiments(ws)
		return err
	})
	return out, err
}
