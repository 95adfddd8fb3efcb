package tracking

import (
	"context"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
)

// MaxSearchResults bounds a page of runs/search, as MLflow's server does.
const MaxSearchResults = 1000

// SearchRuns is MLflow's runs/search without a filter or an order: the
// runs of the experiments named (by ID, which is the name), newest job
// first, max from offset; next is the offset of the next page, 0 when
// there is none. A job's run finds only itself.
func (s *Service) SearchRuns(ctx context.Context, p *identity.Principal, ws string, experimentIDs []string, max, offset int) (runs []*RunView, next int, err error) {
	if len(experimentIDs) == 0 {
		return nil, 0, core.FieldErrorf("experiment_ids", "is required: name at least one experiment")
	}
	if max <= 0 {
		max = MaxSearchResults
	}
	if max > MaxSearchResults {
		return nil, 0, core.FieldErrorf("max_results", "is %d; at most %d", max, MaxSearchResults)
	}
	if offset < 0 {
		return nil, 0, core.FieldErrorf("page_token", "is not a page token of this server")
	}
	want := map[string]bool{}
	for _, id := range experimentIDs {
		want[strings.ToLower(id)] = true
	}
	if p != nil && p.Kind == identity.PrincipalJobRun {
		_, job := runOf(p)
		v, err := s.GetRun(ctx, p, ws, job)
		if err != nil || !want[strings.ToLower(v.Experiment)] || offset > 0 {
			return nil, 0, err
		}
		return []*RunView{v}, 0, nil
	}
	if err := s.auth.Authorize(ctx, p, ws, identity.ActJobsRead); err != nil {
		return nil, 0, err
	}
	err = s.store.View(ctx, func(tx store.Tx) error {
		jobs, err := tx.ListJobs(job.JobFilter{Workspace: ws})
		if err != nil {
			return err
		}
		var names []string
		for _, j := range jobs {
			if want[strings.ToLower(ExperimentOf(j))] {
				names = append(names, j.Name)
			}
		}
		if offset >= len(names) {
			return nil
		}
		page := names[offset:]
		if len(page) > max {
			page, next = page[:max], offset+max
		}
		for _, name := range page {
			v, err := readRun(tx, ws, name)
			if err != nil {
				return err
			}
			runs = append(runs, v)
		}
		return nil
	})
	return runs, next, err
}
