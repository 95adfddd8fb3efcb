package agentapi_test

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/agentapi"
	"github.com/shoal-ml/shoal/store"
)

// A long-poll woken after its request was made must not end a rank as
// "stopped before it started" on the strength of that request's list of
// running ranks: another sync may have handed the rank out since, and its
// process may be starting (bench/chaos caught a preempted node's rank
// ended that way 2 ms before its process started, and the job's next
// attempt ran beside it). The stale pass asks the agent to sync again; the
// fresh request then decides.
func TestStaleLongPollDoesNotEndAPreparingRank(t *testing.T) {
	ctx := context.Background()
	db, _ := teststore.Open(t)
	err := db.Update(ctx, func(tx store.Tx) error {
		j := &job.Job{Workspace: "ws", JobSpec: job.JobSpec{Name: "j", Command: "sleep 5", Compute: "cpu"}, Status: job.JobPreparing,
			CreatedOn: tx.Now(), AttemptCount: 1, CurrentAttemptID: "att-1", Version: 1}
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		a := &job.Attempt{ID: "att-1", Workspace: "ws", JobName: "j", Number: 1, Status: job.AttemptPreparing, CreatedOn: tx.Now(),
			Ranks: []*job.RankStatus{{Rank: 0, NodeID: "n1", Status: job.AttemptPreparing}}}
		if err := tx.InsertAttempt(a); err != nil {
			return err
		}
		return tx.InsertNode(&node.Node{ID: "n1", Workspace: "ws", Compute: "cpu", Location: "local", State: node.NodePreempted,
			CurrentAttemptID: "att-1", CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	// The full services answer for the jobs, as in the server.
	svc := service.New(service.Config{Store: db})
	s := agentapi.New(agentapi.Config{Store: db, Jobs: svc, Computes: svc, Tokens: svc, Storage: svc})
	rankStatus := func() string {
		var st string
		if err := db.View(ctx, func(tx store.Tx) error {
			a, err := tx.GetAttempt("att-1")
			if err == nil {
				st = a.Ranks[0].Status
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return st
	}
	// A woken long-poll (renew false) whose request lists nothing running.
	resp, err := s.SyncOnce(ctx, "n1", &node.AgentSyncRequest{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Resync || rankStatus() != job.AttemptPreparing {
		t.Fatalf("a stale request: resync %v, rank %s; want a resync and the rank left alone", resp.Resync, rankStatus())
	}
	// The fresh request that follows does decide.
	if _, err := s.SyncOnce(ctx, "n1", &node.AgentSyncRequest{}, true); err != nil {
		t.Fatal(err)
	}
	if st := rankStatus(); st != node.RankPreempted {
		t.Fatalf("a fresh request: rank %s, want %s", st, node.RankPreempted)
	}
}
