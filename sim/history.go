package sim

import (
	"sort"
	"time"

	"github.com/shoal-ml/shoal/domain/job"
)

// FromHistory turns a server's jobs into a trace: each job that ran
// arrives when it was submitted (from the first submission) and runs as
// long as its last attempt did, on its instance_count nodes. Jobs that
// never started are left out, as they never held a node, and so are
// pipelines and sweeps: they hold none either, and their steps and
// trials are jobs of their own in the history, arriving when their
// parent submitted them.
func FromHistory(jobs []*job.Job) []Job {
	var out []Job
	var first time.Time
	for _, j := range jobs {
		if first.IsZero() || j.CreatedOn.Before(first) {
			first = j.CreatedOn
		}
	}
	for _, j := range jobs {
		if j.IsParent() || j.StartTime == nil || j.EndTime == nil || j.EndTime.Before(*j.StartTime) {
			continue
		}
		waited := max(j.StartTime.Sub(j.CreatedOn), 0)
		out = append(out, Job{ID: j.Name, Submit: j.CreatedOn.Sub(first), Duration: j.EndTime.Sub(*j.StartTime),
			Nodes: j.InstanceCount(), User: j.CreatedBy, Tags: j.Tags, Waited: &waited})
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Submit != out[b].Submit {
			return out[a].Submit < out[b].Submit
		}
		return out[a].ID < out[b].ID
	})
	return out
}

// Actual is the history's own row: the waits the jobs really had
// (submission to start) and their busy node-hours, to read next to what
// each replayed policy predicts. Node-hours with idle time, and so cost,
// are not in a job history (shoal cost reports them). ok is false when
// the jobs carry no real waits (a trace file).
func Actual(jobs []Job) (r *Result, ok bool) {
	r = &Result{Policy: "history", Jobs: len(jobs)}
	for _, j := range jobs {
		if j.Waited == nil {
			return nil, false
		}
		r.Waits = append(r.Waits, Wait{ID: j.ID, Wait: *j.Waited})
		r.BusyNodeHours += j.Duration.Hours() * float64(j.Nodes)
	}
	r.summarize()
	return r, len(jobs) > 0
}
