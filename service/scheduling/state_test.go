package scheduling_test

import (
	"fmt"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
)

// The autoscaler's own read, when no placement pass handed it a state,
// reads the queue one compute at a time and keeps of it what a whole read
// gave it: each compute's node demand, and each queue's largest gang
// (the first job of it), not every job.
func TestReadScaleStateKeepsDemandAndLargestGang(t *testing.T) {
	s, _ := viewStores(t)
	gangs := map[string][]int{"a": {1, 4, 2, 4, 1}, "b": {2, 1}}
	viewUpdate(t, s, func(tx store.Tx) error {
		if err := tx.InsertWorkspace(&core.Workspace{Name: "ws", Location: "local"}); err != nil {
			return err
		}
		for _, c := range []*compute.Compute{viewCompute("a", 10), viewCompute("b", 10)} {
			if err := tx.InsertCompute(c); err != nil {
				return err
			}
		}
		seq := int64(0)
		for i := range 5 {
			for _, c := range []string{"a", "b"} {
				if i >= len(gangs[c]) {
					continue
				}
				seq++
				j := &job.Job{JobSpec: job.JobSpec{Name: fmt.Sprintf("%s%d", c, i), Type: "command", Command: "true", Compute: c,
					Resources: &job.JobResources{InstanceCount: gangs[c][i]}}, Workspace: "ws", Status: job.JobQueued, Seq: seq, Version: 1}
				if err := tx.InsertJob(j); err != nil {
					return err
				}
			}
		}
		return nil
	})
	var st *scheduling.State
	err := s.View(t.Context(), func(tx store.Tx) (err error) {
		st, err = scheduling.ReadScaleState(tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for c, sizes := range gangs {
		want := 0
		for _, n := range sizes {
			want += n
		}
		if k := "ws/" + c; st.Demand[k] != want {
			t.Errorf("demand of %s: %d, want %d (every queued job's instances)", k, st.Demand[k], want)
		}
	}
	got := map[string]string{}
	for _, j := range st.Queued {
		got[j.ComputeKey] += fmt.Sprintf("%s:%d ", j.Name, j.InstanceCount)
	}
	want := map[string]string{"a": "a1:4 ", "b": "b0:2 "}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("queued jobs kept: %v, want each compute's first largest gang %v", got, want)
	}
}
