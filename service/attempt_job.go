package service

import (
	"github.com/shoal-ml/shoal"
)

// saveAttemptAndJob saves a and j after a change to a rank; the job's
// Version moves on, so that its watchers see it.
func saveAttemptAndJob(tx shoal.Tx, j *shoal.Job, a *shoal.Attempt) error {
	if err := tx.UpdateAttempt(a); err != nil {
		return err
	}
	j.Version++
	return tx.UpdateJob(j)
}
