package sim

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal"
)

// A history with a pipeline replays its steps, as the jobs they are,
// and not the pipeline, which held no node.
func TestFromHistorySkipsParents(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) *time.Time { v := t0.Add(time.Duration(s) * time.Second); return &v }
	jobs := []*shoal.Job{
		{JobSpec: shoal.JobSpec{Name: "p", Type: shoal.JobTypePipeline}, Pipeline: &shoal.PipelineSpec{}, CreatedOn: t0, StartTime: at(0), EndTime: at(100)},
		{JobSpec: shoal.JobSpec{Name: "p-prep"}, ParentJobName: "p", CreatedOn: t0.Add(time.Second), StartTime: at(2), EndTime: at(40)},
		{JobSpec: shoal.JobSpec{Name: "p-train"}, ParentJobName: "p", CreatedOn: t0.Add(41 * time.Second), StartTime: at(42), EndTime: at(100)},
		{JobSpec: shoal.JobSpec{Name: "s"}, Sweep: &shoal.SweepSpec{}, CreatedOn: t0, StartTime: at(0), EndTime: at(10)},
	}
	got := FromHistory(jobs)
	if len(got) != 2 || got[0].ID != "p-prep" || got[1].ID != "p-train" {
		t.Fatalf("replayed %+v, want the two steps only", got)
	}
	if got[1].Submit != 41*time.Second || got[1].Duration != 58*time.Second {
		t.Errorf("train: submit %s duration %s", got[1].Submit, got[1].Duration)
	}
}
