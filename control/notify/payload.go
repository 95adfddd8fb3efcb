package notify

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/notify"
)

// eventMap maps a (resource type, event kind) of the log to the
// notification event it is, for the kinds that need nothing more; a
// job's end is mapped from the job's real status (jobEndEvent).
var eventMap = map[[2]string]string{
	{core.ResourceJob, core.EventQueuedTooLong}:         notify.JobQueuedTooLong,
	{core.ResourceJob, core.EventGPUUnderutilized}:      notify.GPUUnderutilized,
	{core.ResourceCompute, core.EventNodeLost}:          notify.NodeLost,
	{core.ResourceCompute, core.EventProvisioningStuck}: notify.ProvisioningStuck,
	{core.ResourceCompute, core.EventIdleShutdownSoon}:  notify.InstanceIdleShutdown,
	{core.ResourceBudget, core.EventBudget}:             notify.BudgetThreshold,
	{core.ResourceSchedule, core.EventScheduleFired}:    notify.ScheduleFired,
}

// summaries are each event's one line; %s is the resource's name.
var summaries = map[string]string{
	notify.JobCompleted:         "Job %s completed",
	notify.JobFailed:            "Job %s failed",
	notify.JobCanceled:          "Job %s was canceled",
	notify.JobQueuedTooLong:     "Job %s has waited in the queue too long",
	notify.GPUUnderutilized:     "Job %s is leaving its GPUs idle",
	notify.NodeLost:             "Compute %s lost a node",
	notify.ProvisioningStuck:    "Compute %s is stuck provisioning a node",
	notify.InstanceIdleShutdown: "Instance %s will be stopped for idleness soon",
	notify.BudgetThreshold:      "Budget %s crossed a threshold",
	notify.ScheduleFired:        "Schedule %s fired",
}

// isJobEndEvent says whether e records a job's end.
func isJobEndEvent(e *core.Event) bool {
	return e.ResourceType == core.ResourceJob && (e.Kind == core.EventJobCompleted || e.Kind == core.EventJobFailed || e.Kind == core.EventJobCanceled)
}

// needsJob says whether e's notification is built with its job.
func needsJob(e *core.Event) bool {
	return e.ResourceType == core.ResourceJob && (isJobEndEvent(e) || eventMap[[2]string{e.ResourceType, e.Kind}] != "")
}

// payload builds the notification of e, with the job it is about (nil
// for other resources: read before the pass when it could be, see
// prefetch); ok false when e is not one people are told of.
func (n *Notifier) payload(ps *pass, e *core.Event) (p *notify.Payload, j *job.Job, ok bool, err error) {
	event := eventMap[[2]string{e.ResourceType, e.Kind}]
	jobEnd := isJobEndEvent(e)
	if event == "" && !jobEnd {
		return nil, nil, false, nil
	}
	if e.ResourceType == core.ResourceJob {
		var read bool
		if j, read = ps.jobs[jobKey(e.Workspace, e.ResourceName)]; !read {
			if j, err = ps.tx.GetJob(e.Workspace, e.ResourceName); err != nil && core.ErrorCode(err) != core.ENOTFOUND {
				return nil, nil, false, err
			}
		}
		if j == nil {
			return nil, nil, false, nil // deleted since
		}
		if jobEnd {
			// The job's real status says how it ended (a pipeline's
			// cancel, a retry that ran again and completed).
			if event = jobEndEvent[j.Status]; event == "" {
				return nil, nil, false, nil
			}
		}
	}
	p = &notify.Payload{
		ID: "evt_" + strconv.FormatInt(e.ID, 10), Event: event, Time: e.Time, Workspace: e.Workspace,
		ResourceType: e.ResourceType, ResourceName: e.ResourceName, Reason: e.Reason,
		Summary: fmt.Sprintf(summaries[event], e.ResourceName),
	}
	switch {
	case j != nil:
		p.Details = jobDetails(j)
		if event == notify.JobQueuedTooLong {
			p.Details["wait_reason"] = e.Reason
		}
		if event == notify.JobFailed && j.Error != "" && p.Reason == "" {
			p.Reason = j.Error
		}
		p.URL = n.studioURL("jobs", e.Workspace, j.Name)
	case e.ResourceType == core.ResourceCompute:
		p.URL = n.studioURL("computes", e.Workspace, e.ResourceName)
	}
	bound(p)
	return p, j, true, nil
}

// MaxText bounds each text of a payload (the reason, a job's error): a
// job may fail with a megabyte of traceback, which every subscribed
// receiver, every retry and the mail would otherwise carry. The head is
// kept (where an error usually says what happened) and the cut said.
const MaxText = 4 << 10

// bound cuts p's reason and text details to MaxText bytes each.
func bound(p *notify.Payload) {
	p.Reason = cut(p.Reason)
	for k, v := range p.Details {
		if s, ok := v.(string); ok {
			p.Details[k] = cut(s)
		}
	}
}

// cut keeps s's first MaxText bytes, on a character boundary, saying
// how long it was.
func cut(s string) string {
	if len(s) <= MaxText {
		return s
	}
	n := MaxText
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s… (cut: %d bytes in all)", s[:n], len(s))
}

// jobDetails are what a job's notification says of it.
func jobDetails(j *job.Job) map[string]any {
	d := map[string]any{"status": j.Status}
	for k, v := range map[string]string{"display_name": j.DisplayName, "experiment_name": j.ExperimentName, "compute": j.Compute,
		"type": j.Type, "error": j.Error, "status_reason": j.StatusReason} {
		if v != "" {
			d[k] = v
		}
	}
	if j.StartTime != nil {
		d["start_time"] = j.StartTime.UTC()
	}
	if j.EndTime != nil {
		d["end_time"] = j.EndTime.UTC()
	}
	return d
}

func jsonPayload(p *notify.Payload) (json.RawMessage, error) {
	return json.Marshal(p)
}
