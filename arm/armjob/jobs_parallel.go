package armjob

import (
	"strconv"

	"github.com/shoal-ml/shoal/domain/job"
)

// parallelProperties puts a parallel job's progress (read from its
// ledger when the job is shown) among the job's string properties, where
// azure-ai-ml's Job.properties shows it: Azure's REST job has no field
// for it.
func parallelProperties(j *job.Job, p map[string]any) {
	pr := j.ParallelProgress
	if pr == nil {
		return
	}
	props, _ := p["properties"].(map[string]string)
	if props == nil {
		props = map[string]string{}
	}
	for k, v := range map[string]int{"mini_batches": pr.MiniBatches, "items": pr.Items, "done": pr.Done, "failed": pr.Failed,
		"retried": pr.Retried, "in_flight": pr.InFlight, "left": pr.Left, "failed_items": pr.FailedItems} {
		props["shoal.parallel."+k] = strconv.Itoa(v)
	}
	if pr.PerMinute > 0 {
		props["shoal.parallel.per_minute"] = strconv.FormatFloat(pr.PerMinute, 'f', 2, 64)
	}
	if pr.ETA != "" {
		props["shoal.parallel.eta"] = pr.ETA
	}
	if pr.Aborted != "" {
		props["shoal.parallel.aborted"] = pr.Aborted
	}
	p["properties"] = props
}
