package service

import (
	"github.com/shoal-ml/shoal"
)

// attemptWithJob reads an attempt and the job it belongs to: how a node's
// current work (Node.CurrentAttemptID) is followed to its job.
func attemptWithJob(tx shoal.Tx, attemptID string) (*shoal.Attempt, *shoal.Job, error) {
	a, err := tx.GetAttempt(attemptID)
	if err != nil {
		return nil, nil, err
	}
	j, err := tx.GetJob(a.Workspace, a.JobName)
	if err != nil {
		return nil, nil, err
	}
	return a, j, nil
}

// saveAttemptAndJob saves a and j after a change to a rank; the job's
// Version moves on, so that its watchers see it.
func saveAttemptAndJob(tx shoal.Tx, j *shoal.Job, a *shoal.Attempt) error {
	if err := tx.UpdateAttempt(a); err != nil {
		return err
	}
	j.Version++
	return tx.UpdateJob(j)
}
