package service

import (
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
)

// saveAttemptAndJob saves a and j after a change to a rank; the job's
// Version moves on, so that its watchers see it. The two writes go
// together (one round trip on PostgreSQL: every rank report makes them).
func saveAttemptAndJob(tx store.Tx, j *job.Job, a *job.Attempt) error {
	j.Version++
	return tx.Together(func(tx store.Tx) error {
		if err := tx.UpdateAttempt(a); err != nil {
			return err
		}
		return tx.UpdateJob(j)
	})
}
