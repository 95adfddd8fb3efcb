package sim

import (
	"sort"
	"time"

	"github.com/shoal-ml/shoal"
)

// FromHistory turns a server's jobs into a trace: each job that ran
// arrives when it was submitted (from the first submission) and runs as
// long as its last attempt did, on its instance_count nodes. Jobs that
// never started are left out, as they never held a node, and so are
// pipelines and sweeps: they hold none either, and their steps and
// trials are jobs of their own in the history, arriving when their
// parent submitted them.
func FromHistory(jobs []*shoal.Job) []Job {
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
		out = append(out, Job{ID: j.Name, Submit: j.CreatedOn.Sub(first), Duration: j.EndTime.Sub(*j.StartTime),
			Nodes: j.InstanceCount(), User: j.CreatedBy, Tags: j.Tags})
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Submit != out[b].Submit {
			return out[a].Submit < out[b].Submit
		}
		return out[a].ID < out[b].ID
	})
	return out
}
