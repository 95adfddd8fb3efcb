package placement_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"testing"

	"github.com/shoal-ml/shoal/control/placement"
	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
)

// A whole-queue pass that reads each compute's queue a few jobs at a time
// decides what it decides reading it at once: the same placements and
// the same reasons, word for word, and the same demand and largest gangs
// for the autoscaler. Three idle nodes of "cpa" take the first jobs that
// fit, a gang of 3 blocks the rest (in a later page than the first), and
// "cpb"'s queue is read in pages too; no read holds more than a page.
func TestWholeQueuePassInPagesDecidesAsAtOnce(t *testing.T) {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	seedClusters(t, db, 4, "cpa", "cpb")
	err := db.Update(ctx, func(tx store.Tx) error {
		now := tx.Now()
		for _, id := range []string{"cpa-n2", "cpa-n3"} {
			if err := tx.InsertNode(&node.Node{ID: id, Workspace: "ws", Compute: "cpa", Location: "local", State: node.NodeIdle,
				Size: "Standard_DS3_v2", VCPUs: 4, CreatedOn: now, LastHeartbeat: now, IdleSince: &now, Version: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	counter := &readCounter{Store: db}
	svc := newServices(t, counter)
	admin := asAdmin(ctx)
	counts := []int{1, 1, 1, 3, 1, 2, 4, 1, 1, 1}
	for i, n := range counts {
		for _, c := range []string{"cpa", "cpb"} {
			spec := &job.JobSpec{Name: fmt.Sprintf("%s-%d", c, i), Type: job.JobTypeCommand, Command: "true", Compute: "azureml:" + c,
				Resources: &job.JobResources{InstanceCount: n}}
			if i == 7 {
				spec.QueueSettings = &job.QueueSettings{Priority: job.PriorityHigh}
			}
			if _, _, err := svc.SubmitJob(admin, "ws", spec); err != nil {
				t.Fatal(err)
			}
			clock.Advance(1)
		}
	}
	plan := func(page int) (*placement.Pass, *scheduling.State) {
		t.Helper()
		pass := placement.New(svc, noBlocks{}, scheduling.NewView())
		pass.SetPage(page)
		counter.mu.Lock()
		counter.max = 0
		counter.mu.Unlock()
		p, err := pass.Plan(ctx, clock.Now(), true, nil)
		if err != nil {
			t.Fatal(err)
		}
		if counter.max > max(page, 1) {
			t.Errorf("page %d: one read handed %d queued jobs", page, counter.max)
		}
		st := p.State()
		return p, st
	}
	atOnce, stOnce := plan(1000)
	want := atOnce.Result()
	if len(want.Placements) == 0 || len(want.Waiting) == 0 {
		t.Fatalf("at once: %d placements, %d waiting: the test places nothing or explains nothing", len(want.Placements), len(want.Waiting))
	}
	for _, page := range []int{1, 2, 3} {
		p, st := plan(page)
		got := p.Result()
		if !reflect.DeepEqual(got.Placements, want.Placements) {
			t.Errorf("page %d: placements %v, at once %v", page, got.Placements, want.Placements)
		}
		if !scheduler.SameWaiting(got.Waiting, want.Waiting) {
			for id, r := range want.Waiting {
				if !got.Waiting[id].Same(r) {
					t.Errorf("page %d: %s waits with %+v, at once with %+v", page, id, got.Waiting[id], r)
				}
			}
			t.Errorf("page %d: %d reasons, at once %d", page, len(got.Waiting), len(want.Waiting))
		}
		if !maps.Equal(st.Demand, stOnce.Demand) || !reflect.DeepEqual(st.Queued, stOnce.Queued) {
			t.Errorf("page %d: demand %v and largest gangs %v, at once %v and %v", page, st.Demand, st.Queued, stOnce.Demand, stOnce.Queued)
		}
		if p.Queued() != 2*len(counts) {
			t.Errorf("page %d: the pass read %d queued jobs, want %d", page, p.Queued(), 2*len(counts))
		}
	}
}
