package job

import (
	"sort"

	"github.com/shoal-ml/shoal/domain/job"
)

// refuseKindsNotRun refuses, before anything is uploaded, a job or a
// pipeline step of a type Shoal does not run (automl, spark,
// finetuning), with the server's sentence: uploading an AutoML job's
// training data only to have the job refused would waste the upload.
func refuseKindsNotRun(doc map[string]any) error {
	if t, _ := doc["type"].(string); job.NotRunHere(t) != "" {
		return job.UnsupportedJobType("type", t)
	}
	steps, _ := doc["jobs"].(map[string]any)
	names := make([]string, 0, len(steps))
	for name := range steps {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		step, _ := steps[name].(map[string]any)
		if t, _ := step["type"].(string); job.NotRunHere(t) != "" {
			return job.UnsupportedJobType(job.JobKeyPath("jobs", name)+".type", t)
		}
	}
	return nil
}
