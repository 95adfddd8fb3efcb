package sim

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/job"
)

// A history with a pipeline replays its steps, as the jobs they are,
// and not the pipeline, which held no node.
func TestFromHistorySkipsParents(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) *time.Time { v := t0.Add(time.Duration(s) * time.Second); return &v }
	jobs := []*job.Job{
		{JobSpec: job.JobSpec{Name: "p", Type: job.JobTypePipeline}, Pipeline: &job.PipelineSpec{}, CreatedOn: t0, StartTime: at(0), EndTime: at(100)},
		{JobSpec: job.JobSpec{Name: "p-prep"}, ParentJobName: "p", CreatedOn: t0.Add(time.Second), StartTime: at(2), EndTime: at(40)},
		{JobSpec: job.JobSpec{Name: "p-train"}, ParentJobName: "p", CreatedOn: t0.Add(41 * time.Second), StartTime: at(42), EndTime: at(100)},
		{JobSpec: job.JobSpec{Name: "s"}, Sweep: &job.SweepSpec{}, CreatedOn: t0, StartTime: at(0), EndTime: at(10)},
	}
	got := FromHistory(jobs)
	if len(got) != 2 || got[0].ID != "p-prep" || got[1].ID != "p-train" {
		t.Fatalf("replayed %+v, want the two steps only", got)
	}
	if got[1].Submit != 41*time.Second || got[1].Duration != 58*time.Second {
		t.Errorf("train: submit %s duration %s", got[1].Submit, got[1].Duration)
	}
}

// The history's own row: what the jobs really waited (submission to
// start), next to what the replay predicts.
func TestHistoryRowHasTheRealWaits(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) *time.Time { v := t0.Add(time.Duration(ms) * time.Millisecond); return &v }
	jobs := FromHistory([]*job.Job{
		{JobSpec: job.JobSpec{Name: "a"}, CreatedOn: t0, StartTime: at(10), EndTime: at(3_600_010)},
		{JobSpec: job.JobSpec{Name: "b"}, CreatedOn: t0.Add(time.Second), StartTime: at(31_000), EndTime: at(61_000)},
	})
	r, ok := Actual(jobs)
	if !ok {
		t.Fatal("a history has real waits")
	}
	if r.Policy != "history" || r.Jobs != 2 || r.Waited != 2 {
		t.Fatalf("row %+v", r)
	}
	if r.WaitMax != 30 || r.WaitP50 != 0.01 {
		t.Errorf("waits: max %v p50 %v, want 30 and 0.01", r.WaitMax, r.WaitP50)
	}
	if want := 1 + 30.0/3600; r.BusyNodeHours != want {
		t.Errorf("busy node-hours %v, want %v", r.BusyNodeHours, want)
	}
	// A trace file has no real waits: no row.
	if _, ok := Actual([]Job{{ID: "x", Duration: time.Minute, Nodes: 1}}); ok {
		t.Error("a trace without waits got a history row")
	}
}
