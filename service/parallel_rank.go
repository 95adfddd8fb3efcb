package service

import (
	"github.com/shoal-ml/shoal/decide/jobrun"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/service/parallel"
	"github.com/shoal-ml/shoal/store"
)

// afterParallelStep carries out, for a parallel job, what a rank's end
// means to its ledger: a leaving rank's leases go back, and a job that
// failed because its ledger aborted (an error threshold passed) says so
// with the ledger's words, which name the failed items, rather than
// with rank 0's exit code.
func afterParallelStep(tx store.Tx, j *job.Job, a *job.Attempt, rank int) error {
	if j.Parallel == nil {
		return nil
	}
	if err := releaseParallelRank(tx, j, a, rank); err != nil {
		return err
	}
	if j.Status != job.JobFailed {
		return nil
	}
	p, err := tx.GetParallelPlan(j.Workspace, j.Name)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil
	} else if err != nil {
		return err
	}
	if p.Aborted != "" {
		j.Error = p.Aborted
		j.StatusReason = "failed: " + j.Error
	}
	return nil
}

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
