package armschedule

import (
	"strings"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/arm/armjob"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
	dschedule "github.com/shoal-ml/shoal/domain/schedule"
)

// Resource is Azure's Schedule resource as Shoal answers it: what
// azure-ai-ml's JobSchedule._from_rest_object reads.
type Resource struct {
	ID         string              `json:"id"`
	Name       string              `json:"name"`
	Type       string              `json:"type"`
	SystemData *armcore.SystemData `json:"systemData,omitempty"`
	Properties map[string]any      `json:"properties"`
}

// ToScheduleResource is a stored schedule as Azure answers it, in scope:
// provisioningState Succeeded (a schedule is ready once stored), its
// trigger, and its action, a CreateJob's jobDefinition written as a job
// of the same definition is (armjob.ToJobResource) with sourceJobId the
// job it was made from. publicURL is the server's, as for jobs.
func ToScheduleResource(scope armcore.Scope, publicURL string, sc *dschedule.JobSchedule) *Resource {
	wsID := scope.WorkspaceID(sc.Workspace)
	p := map[string]any{
		"displayName": sc.DisplayName, "description": sc.Description, "tags": nonNil(sc.Tags), "properties": nonNil(sc.Properties),
		"isEnabled": sc.IsEnabled, "provisioningState": "Succeeded", "trigger": triggerProps(sc.Trigger), "action": actionProps(scope, wsID, publicURL, sc),
	}
	return &Resource{
		ID: wsID + "/schedules/" + sc.Name, Name: sc.Name, Type: ResourceType,
		SystemData: &armcore.SystemData{CreatedAt: sc.CreatedOn.UTC(), CreatedBy: sc.CreatedBy},
		Properties: p,
	}
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// restFrequencies are a recurrence's frequencies as Azure's REST spells
// them.
var restFrequencies = map[string]string{"minute": "Minute", "hour": "Hour", "day": "Day", "week": "Week", "month": "Month"}

// triggerProps is a trigger as Azure's CronTrigger or RecurrenceTrigger.
// A recurrence always carries a schedule with hours and minutes lists:
// azure-ai-ml's RecurrencePattern requires both, and begin_enable PUTs
// back what it read.
func triggerProps(tr *dschedule.Trigger) map[string]any {
	if tr == nil {
		return map[string]any{}
	}
	t := map[string]any{"timeZone": tr.TimeZone}
	if tr.TimeZone == "" {
		t["timeZone"] = "UTC"
	}
	if tr.StartTime != "" {
		t["startTime"] = tr.StartTime
	}
	if tr.EndTime != "" {
		t["endTime"] = tr.EndTime
	}
	if strings.EqualFold(tr.Type, dschedule.Cron) {
		t["triggerType"], t["expression"] = "Cron", tr.Expression
		return t
	}
	t["triggerType"], t["interval"] = "Recurrence", tr.Interval
	t["frequency"] = restFrequencies[strings.ToLower(tr.Frequency)]
	s := map[string]any{"hours": []int{}, "minutes": []int{}}
	if pt := tr.Schedule; pt != nil {
		if pt.Hours != nil {
			s["hours"] = []int(pt.Hours)
		}
		if pt.Minutes != nil {
			s["minutes"] = []int(pt.Minutes)
		}
		if len(pt.WeekDays) > 0 {
			s["weekDays"] = []string(pt.WeekDays)
		}
		if len(pt.MonthDays) > 0 {
			s["monthDays"] = []int(pt.MonthDays)
		}
	}
	t["schedule"] = s
	return t
}

// actionProps is the schedule's action.
func actionProps(scope armcore.Scope, wsID, publicURL string, sc *dschedule.JobSchedule) map[string]any {
	if inv := sc.InvokeBatchEndpoint; inv != nil {
		d := map[string]any{"endpoint": inv.Endpoint, "input": inv.Input}
		for k, v := range map[string]string{"deployment": inv.Deployment, "inputType": inv.InputType, "experimentName": inv.ExperimentName, "outputPath": inv.OutputPath} {
			if v != "" {
				d[k] = v
			}
		}
		return map[string]any{"actionType": dschedule.ActionInvokeBatchEndpoint, "endpointInvocationDefinition": d}
	}
	def := map[string]any{"jobType": "Pipeline"}
	if cj := sc.CreateJob; cj != nil {
		if j := storedJob(sc); j != nil {
			def = armjob.ToJobResource(scope, publicURL, j).Properties
			// A definition has not run: it has no status nor services.
			delete(def, "status")
			delete(def, "services")
		}
		if cj.SourceJob != "" {
			def["sourceJobId"] = wsID + "/jobs/" + cj.SourceJob
		}
	}
	return map[string]any{"actionType": dschedule.ActionCreateJob, "jobDefinition": def}
}

// storedJob is the schedule's job document as a job of its definition
// (named as the schedule), for armjob to write; nil when it does not
// decode, which a stored schedule's checked document always does.
func storedJob(sc *dschedule.JobSchedule) *job.Job {
	doc := sc.CreateJob.Job
	typ, err := pipelinejob.DecodeJobType(doc)
	if err != nil {
		return nil
	}
	j := &job.Job{Workspace: sc.Workspace, CreatedOn: sc.CreatedOn, CreatedBy: sc.CreatedBy}
	switch typ {
	case job.JobTypePipeline:
		spec, err := pipelinejob.DecodePipelineSpec(doc)
		if err != nil || pipelinejob.NormalizePipelineSpec(spec) != nil {
			return nil
		}
		j.Pipeline, j.DisplayName, j.Description, j.Tags, j.ExperimentName = spec, spec.DisplayName, spec.Description, spec.Tags, spec.ExperimentName
	case job.JobTypeSweep:
		spec, err := sweepjob.DecodeSweepSpec(doc)
		if err != nil || sweepjob.NormalizeSweepSpec(spec) != nil {
			return nil
		}
		j.Sweep, j.DisplayName, j.Description, j.Tags, j.ExperimentName = spec, spec.DisplayName, spec.Description, spec.Tags, spec.ExperimentName
	default:
		spec, err := job.DecodeJobSpec(doc)
		if err != nil || job.NormalizeJobSpec(spec) != nil {
			return nil
		}
		j.JobSpec = *spec
	}
	j.Name = sc.Name
	return j
}

// ListView reads a schedule list's listViewType: EnabledOnly (also when
// empty: azure-ai-ml's default), DisabledOnly or All, as a filter on
// whether a schedule is enabled.
func ListView(v string) (func(enabled bool) bool, error) {
	switch strings.ToLower(v) {
	case "", "enabledonly":
		return func(e bool) bool { return e }, nil
	case "disabledonly":
		return func(e bool) bool { return !e }, nil
	case "all":
		return func(bool) bool { return true }, nil
	}
	return nil, core.FieldErrorf("listViewType", "%q is not EnabledOnly, DisabledOnly or All", core.Short(v))
}
