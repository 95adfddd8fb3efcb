package placement_test

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal/control/placement"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
)

// A pass for one compute's new job schedules that compute's queue alone:
// of two computes, each with a queued job and an idle node, RunFor the
// first places only its job; the next pass over every queue places the
// other's. The state it returns still holds both clusters (the
// autoscaler counts the other's quota from it).
func TestRunForPlacesOneComputesQueue(t *testing.T) {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	seedClusters(t, db, 2, "cpa", "cpb")
	svc := newServices(t, db)
	admin := asAdmin(ctx)
	for _, c := range []string{"cpa", "cpb"} {
		if _, _, err := svc.SubmitJob(admin, "ws", &job.JobSpec{Name: "on-" + c, Type: job.JobTypeCommand, Command: "true", Compute: "azureml:" + c}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(1)
	}
	pass := placement.New(svc, noBlocks{}, scheduling.NewView())
	status := func(name string) string {
		t.Helper()
		var j *job.Job
		if err := db.View(ctx, func(tx store.Tx) (err error) { j, err = tx.GetJob("ws", name); return err }); err != nil {
			t.Fatal(err)
		}
		return j.Status
	}
	st, err := pass.RunFor(ctx, clock.Now(), map[string]bool{"ws/cpa": true})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := status("on-cpa"), status("on-cpb"); a == job.JobQueued || b != job.JobQueued {
		t.Fatalf("after a pass for a alone: on-a %s, on-b %s; want on-a started and on-b queued", a, b)
	}
	if len(st.Clusters) != 2 || len(st.AllNodes()) != 2 {
		t.Errorf("the pass's state holds %d clusters and %d nodes, want 2 and 2", len(st.Clusters), len(st.AllNodes()))
	}
	if n := st.Node("cpa-n1"); n == nil || n.CurrentAttemptID == "" {
		t.Errorf("the state does not show a-n1 taken: %+v", n)
	}
	if _, err := pass.RunOnce(ctx, clock.Now(), false); err != nil {
		t.Fatal(err)
	}
	if b := status("on-cpb"); b == job.JobQueued {
		t.Fatalf("after a pass over every queue: on-b still queued")
	}
}
