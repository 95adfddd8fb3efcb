package service

import (
	"context"

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

// liveRankNodes are the nodes of a's ranks that have not ended: those to
// wake so that they stop when the attempt ends without them.
func liveRankNodes(a *shoal.Attempt) []string {
	var out []string
	for _, r := range a.Ranks {
		if !shoal.AttemptTerminal(r.Status) {
			out = append(out, r.NodeID)
		}
	}
	return out
}

// finalizeIfEnded finalizes a once every one of its ranks has ended.
func (s *Services) finalizeIfEnded(ctx context.Context, tx shoal.Tx, j *shoal.Job, a *shoal.Attempt) error {
	if !allRanks(a, func(r *shoal.RankStatus) bool { return shoal.AttemptTerminal(r.Status) }) {
		return nil
	}
	return s.finalizeAttempt(ctx, tx, j, a)
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
