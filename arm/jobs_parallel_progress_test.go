package arm_test

import (
	"encoding/json"
	"testing"

	"github.com/shoal-ml/shoal/arm"
	"github.com/shoal-ml/shoal/arm/armjob"
	"github.com/shoal-ml/shoal/domain/job"
)

// A parallel job's progress is among its REST properties (string
// values, as Azure's job properties are); a job without one has none.
func TestJobResourceParallelProgress(t *testing.T) {
	j := &job.Job{Workspace: "ws", JobSpec: job.JobSpec{Name: "pj", Command: "x", Parallel: &job.ParallelSpec{}},
		ParallelProgress: &job.ParallelProgress{MiniBatches: 10, Done: 4, Left: 6, InFlight: 2, PerMinute: 1.5, ETA: "2026-01-01T00:04:00Z"}}
	props := func(j *job.Job) map[string]string {
		t.Helper()
		b, _ := json.Marshal(armjob.ToJobResource(arm.Scope{Subscription: "s", ResourceGroup: "rg"}, "https://shoal.example", j))
		var back struct {
			Properties struct {
				Properties map[string]string `json:"properties"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		return back.Properties.Properties
	}
	got := props(j)
	for k, want := range map[string]string{"shoal.parallel.mini_batches": "10", "shoal.parallel.done": "4", "shoal.parallel.left": "6",
		"shoal.parallel.in_flight": "2", "shoal.parallel.failed": "0", "shoal.parallel.per_minute": "1.50", "shoal.parallel.eta": "2026-01-01T00:04:00Z"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q (all: %v)", k, got[k], want, got)
		}
	}
	if _, ok := got["shoal.parallel.aborted"]; ok {
		t.Errorf("aborted set on a job going on: %v", got)
	}
	j.ParallelProgress = nil
	if got := props(j); len(got) != 0 {
		t.Errorf("a job without progress: %v", got)
	}
}
