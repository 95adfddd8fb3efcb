package storetest

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	jobkind "github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// Writes inside Tx.Together land as if each had run alone, whichever way
// a store sends them (PostgreSQL holds them and sends one statement): a
// read inside sees them, a row written twice keeps the second, a write
// whose indexed columns move lands, a missing row or a taken ID is
// Together's error, and an Update that returns it leaves nothing of it.
func testTogether(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	insertJobs(t, s, fullJob("prod", "train", "gpu", 7, at))
	insertAttempts(t, s, newAttempt("prod", "train", "att-1", 1, at))
	insertNodes(t, s, minimalNode("prod", "gpu", "node-1", at))

	var wantJob *jobkind.Job
	var wantAttempt *jobkind.Attempt
	var wantNode *node.Node
	stcheck.Update(t, s, func(tx store.Tx) error {
		j, err := tx.GetJob("prod", "train")
		if err != nil {
			return err
		}
		a, err := tx.GetAttempt("att-1")
		if err != nil {
			return err
		}
		n, err := tx.GetNode("node-1")
		if err != nil {
			return err
		}
		err = tx.Together(func(tx store.Tx) error {
			n.State, n.CurrentAttemptID, n.Version = node.NodeRunning, "att-2", n.Version+1
			if err := tx.UpdateNode(n); err != nil {
				return err
			}
			a.Status = jobkind.AttemptCompleted
			if err := tx.UpdateAttempt(a); err != nil {
				return err
			}
			if err := tx.InsertAttempt(newAttempt("prod", "train", "att-2", 2, at)); err != nil {
				return err
			}
			j.Status, j.Version = jobkind.JobRunning, j.Version+1
			if err := tx.UpdateJob(j); err != nil {
				return err
			}
			// The same row again: the second write is the one kept.
			j.Description, j.Version = "written twice", j.Version+1
			if err := tx.UpdateJob(j); err != nil {
				return err
			}
			// A read inside sees what was written before it.
			got, err := tx.GetAttempt("att-1")
			if err != nil {
				return err
			}
			if got.Status != jobkind.AttemptCompleted {
				t.Errorf("GetAttempt inside Together: status %s, want %s", got.Status, jobkind.AttemptCompleted)
			}
			// A Together inside another joins it.
			return tx.Together(func(tx store.Tx) error {
				// The compute and the sequence are indexed columns the
				// quick form of an update leaves as they are.
				j.Compute, j.Seq, j.Version = "cpu", 8, j.Version+1
				return tx.UpdateJob(j)
			})
		})
		if err != nil {
			return err
		}
		// After it, in the same transaction: every write as written.
		got, err := tx.GetJob("prod", "train")
		if err != nil {
			return err
		}
		stcheck.Equal(t, "GetJob after Together in its transaction", got, j)
		wantJob, wantAttempt, wantNode = j, a, n
		return nil
	})
	stcheck.Equal(t, "GetJob after Together", getJob(t, s, "prod", "train"), wantJob)
	stcheck.Equal(t, "GetAttempt after Together", getAttempt(t, s, "att-1"), wantAttempt)
	if got := getAttempt(t, s, "att-2"); got.Number != 2 {
		t.Errorf("the attempt inserted in Together: %+v", got)
	}
	if got := getNode(t, s, "node-1"); got.State != wantNode.State || got.CurrentAttemptID != "att-2" || got.Version != wantNode.Version {
		t.Errorf("the node after Together: state %s, attempt %q, version %d; want %s, att-2, %d", got.State, got.CurrentAttemptID, got.Version, wantNode.State, wantNode.Version)
	}
	stcheck.View(t, s, func(tx store.Tx) error {
		if q, err := tx.ListJobs(jobkind.JobFilter{Workspace: "prod", Compute: "cpu"}); err != nil || len(q) != 1 {
			t.Errorf("jobs of compute cpu after Together moved the job: %d, %v; want 1", len(q), err)
		}
		return nil
	})

	// A missing row and a taken ID are Together's errors, and the Update
	// that returns one writes nothing of it.
	for _, c := range []struct {
		name  string
		write func(tx store.Tx) error
		code  string
	}{
		{"UpdateJob of a missing job", func(tx store.Tx) error { return tx.UpdateJob(fullJob("prod", "missing", "gpu", 9, at)) }, core.ENOTFOUND},
		{"UpdateAttempt of a missing attempt", func(tx store.Tx) error { return tx.UpdateAttempt(newAttempt("prod", "train", "att-404", 3, at)) }, core.ENOTFOUND},
		{"UpdateNode of a missing node", func(tx store.Tx) error { return tx.UpdateNode(minimalNode("prod", "gpu", "node-404", at)) }, core.ENOTFOUND},
		{"InsertAttempt of a taken ID", func(tx store.Tx) error { return tx.InsertAttempt(newAttempt("prod", "train", "att-2", 3, at)) }, core.ECONFLICT},
	} {
		var inside error
		err := s.Update(t.Context(), func(tx store.Tx) error {
			inside = tx.Together(func(tx store.Tx) error {
				j := getJobIn(t, tx, "prod", "train")
				j.Description, j.Version = "not kept", j.Version+1
				if err := tx.UpdateJob(j); err != nil {
					return err
				}
				return c.write(tx)
			})
			return inside
		})
		stcheck.WantCode(t, c.name+" inside Together", inside, c.code)
		stcheck.WantCode(t, c.name+": the Update", err, c.code)
		if got := getJob(t, s, "prod", "train"); got.Description != "written twice" {
			t.Errorf("%s: the job written beside it in the failed Update: description %q, want it unchanged", c.name, got.Description)
		}
	}
}

// getJobIn reads a job in tx, failing the test when it cannot.
func getJobIn(t *testing.T, tx store.Tx, workspace, name string) *jobkind.Job {
	t.Helper()
	j, err := tx.GetJob(workspace, name)
	if err != nil {
		t.Fatalf("GetJob %s/%s: %v", workspace, name, err)
	}
	return j
}
