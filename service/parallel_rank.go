package service

import (
	"github.com/shoal-ml/shoal/decide/jobrun"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/service/parallel"
	"github.com/shoal-ml/shoal/store"
)

// releaseParallelRank gives back at once, without spending a try, the
// mini-batches a parallel job's rank held when it ended Lost or
// Preempted while its attempt goes on (jobrun.Elastic): the other ranks
// lease them next. A rank that ends otherwise reports its own tries.
func releaseParallelRank(tx store.Tx, j *job.Job, a *job.Attempt, rank int) error {
	if !jobrun.Elastic(j, rank) || rank >= len(a.Ranks) {
		return nil
	}
	switch a.Ranks[rank].Status {
	case job.AttemptLost, job.AttemptPreempted:
		return parallel.ReleaseRank(tx, j.Workspace, j.Name, a.ID, rank)
	}
	return nil
}

// withParallelProgress fills a parallel job's ParallelProgress from its
// ledger, read in the job's own transaction (a job without a plan yet
// has none).
func withParallelProgress(tx store.Tx, j *job.Job) error {
	if j == nil || j.Parallel == nil {
		return nil
	}
	p, err := parallel.ProgressTx(tx, j.Workspace, j.Name)
	j.ParallelProgress = p
	return err
}
