package service

import (
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
)

// saveAttemptAndJob saves a and j after a change to a rank; the job's
// Version moves on, so that its watchers see it.
func saveAttemptAndJob(tx store.Tx, j *job.Job, a *job.Attempt) error {
	if err := tx.UpdateAttempt(a); err != nil {
		return err
	}
	j.Version++
	return tx.UpdateJob(j)
}
