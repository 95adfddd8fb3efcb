package cli

import (
	"encoding/json"
	"strings"
	"time"

	dschedule "github.com/shoal-ml/shoal/domain/schedule"

	"github.com/shoal-ml/shoal/decide/schedule"
	"github.com/shoal-ml/shoal/domain/job"
)

// scheduleJobStandIn is the job a documented schedule's local job file
// (create_job: ./job.yml) stands for: the server receives the file's
// document, which the docs do not show beside the schedule.
const scheduleJobStandIn = `{"type": "command", "command": "python train.py", "compute": "azureml:cpu-cluster", "environment": {"image": "python:3.12"}}`

// decodeScheduleDoc decodes a documented schedule as the server does once
// the CLI has sent it: a local job file replaced by a stand-in job with
// the overrides merged, the trigger compiled, a command job decoded.
func decodeScheduleDoc(js []byte) error {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(js, &doc); err != nil {
		return err
	}
	var ref string
	if json.Unmarshal(doc["create_job"], &ref) == nil && !strings.HasPrefix(ref, "azureml:") {
		doc["create_job"] = json.RawMessage(`{"job": ` + scheduleJobStandIn + `}`)
	}
	var cj map[string]json.RawMessage
	if json.Unmarshal(doc["create_job"], &cj) == nil && cj != nil && json.Unmarshal(cj["job"], &ref) == nil && !strings.HasPrefix(ref, "azureml:") {
		cj["job"] = json.RawMessage(scheduleJobStandIn)
		b, err := json.Marshal(cj)
		if err != nil {
			return err
		}
		doc["create_job"] = b
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	sc, err := dschedule.Decode(b)
	if err != nil {
		return err
	}
	if _, err := schedule.CompileTrigger(sc.Trigger, ""); err != nil {
		return err
	}
	if sc.CreateJob == nil || sc.CreateJob.SourceJob != "" {
		return nil
	}
	expanded, err := dschedule.ExpandJob(sc.CreateJob.Job, "nightly-20260301t0200", time.Unix(0, 0))
	if err != nil {
		return err
	}
	spec, err := job.DecodeJobSpec(expanded)
	if err != nil {
		return err
	}
	return job.NormalizeJobSpec(spec)
}
