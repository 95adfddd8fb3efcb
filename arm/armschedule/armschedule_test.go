package armschedule_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/arm/armschedule"
	"github.com/shoal-ml/shoal/domain/core"
	dschedule "github.com/shoal-ml/shoal/domain/schedule"
)

const job = `{"jobType":"Command","command":"echo hi","computeId":"cpu","environmentId":"azureml:env:1"}`

func body(trigger, action string, extra ...string) string {
	return `{"properties":{` + strings.Join(append(extra, `"trigger":`+trigger, `"action":`+action), ",") + `}}`
}

// Hostile and malformed bodies are refused with an error naming Azure's
// property, never a panic.
func TestFromScheduleResourceRefusals(t *testing.T) {
	cron := `{"triggerType":"Cron","expression":"0 2 * * *"}`
	create := `{"actionType":"CreateJob","jobDefinition":` + job + `}`
	for _, c := range []struct{ name, body, field string }{
		{"not an object", `[]`, "body"},
		{"no properties", `{}`, "properties"},
		{"properties not an object", `{"properties":"x"}`, "properties"},
		{"an unknown property", body(cron, create, `"isEnabledd":true`), "properties.isEnabledd"},
		{"no trigger", `{"properties":{"action":` + create + `}}`, "properties.trigger"},
		{"a trigger that is a string", body(`"daily"`, create), "properties.trigger"},
		{"a trigger type that is a number", body(`{"triggerType":5}`, create), "properties.trigger.triggerType"},
		{"hours that are words", body(`{"triggerType":"Recurrence","frequency":"Day","interval":1,"schedule":{"hours":"ten","minutes":[0]}}`, create), "properties.trigger.schedule"},
		{"an unknown schedule key", body(`{"triggerType":"Recurrence","frequency":"Day","interval":1,"schedule":{"hour":[1]}}`, create), "properties.trigger.schedule.hour"},
		{"isEnabled a string", body(cron, create, `"isEnabled":"yes"`), "properties.isEnabled"},
		{"no action", `{"properties":{"trigger":` + cron + `}}`, "properties.action"},
		{"no actionType", body(cron, `{"jobDefinition":`+job+`}`), "properties.action.actionType"},
		{"no jobDefinition", body(cron, `{"actionType":"CreateJob"}`), "properties.action.jobDefinition"},
		{"a jobDefinition that is a list", body(cron, `{"actionType":"CreateJob","jobDefinition":[]}`), "properties.action.jobDefinition"},
		{"a sourceJobId that is a path", body(cron, `{"actionType":"CreateJob","jobDefinition":{"jobType":"Pipeline","sourceJobId":"../../etc/passwd"}}`), "properties.action.jobDefinition.sourceJobId"},
		{"another workspace's job beside a body", body(cron, `{"actionType":"CreateJob","jobDefinition":{"jobType":"Command","command":"x","computeId":"cpu","sourceJobId":"/subscriptions/s/resourceGroups/r/providers/Microsoft.MachineLearningServices/workspaces/other/jobs/j"}}`), "properties.action.jobDefinition.sourceJobId"},
		{"an invocation without input", body(cron, `{"actionType":"InvokeBatchEndpoint","endpointInvocationDefinition":{"endpoint":"e"}}`), "properties.action.endpointInvocationDefinition.input"},
		{"an invocation's unknown key", body(cron, `{"actionType":"InvokeBatchEndpoint","endpointInvocationDefinition":{"endpoint":"e","input":"x","inputs":"y"}}`), "properties.action.endpointInvocationDefinition.inputs"},
	} {
		_, _, err := armschedule.FromScheduleResource(context.Background(), "default", "nightly", []byte(c.body), nil)
		if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != c.field {
			t.Errorf("%s: %v (field %q), want EINVALID naming %s", c.name, err, core.ErrorField(err), c.field)
		}
	}
}

// A schedule answered in Azure's shape reads back as the same schedule:
// azure-ai-ml's begin_enable and begin_disable PUT what they read.
func TestScheduleResourceRoundTrip(t *testing.T) {
	for _, tr := range []string{
		`{"triggerType":"Cron","expression":"30 6 * * 1-5","timeZone":"W. Europe Standard Time","startTime":"2026-01-01T00:00:00","endTime":"2027-01-01T00:00:00"}`,
		`{"triggerType":"Recurrence","frequency":"Week","interval":2,"schedule":{"hours":[10,22],"minutes":[0],"weekDays":["Monday"]},"timeZone":"UTC"}`,
		`{"triggerType":"Recurrence","frequency":"Month","interval":1,"schedule":{"hours":[1],"minutes":[5],"monthDays":[1,15]}}`,
	} {
		in, enabled, err := armschedule.FromScheduleResource(context.Background(), "default", "nightly",
			[]byte(body(tr, `{"actionType":"CreateJob","jobDefinition":`+job+`}`, `"isEnabled":false`, `"displayName":"Nightly"`)), nil)
		if err != nil || enabled == nil || *enabled {
			t.Fatalf("%s: %v, enabled %v", tr, err, enabled)
		}
		in.Workspace = "default"
		out := armschedule.ToScheduleResource(armcore.Scope{Subscription: "s", ResourceGroup: "rg"}, "", in)
		b, _ := json.Marshal(out)
		again, _, err := armschedule.FromScheduleResource(context.Background(), "default", "nightly", b, nil)
		if err != nil {
			t.Fatalf("%s: the answer does not read back: %v\n%s", tr, err, b)
		}
		if in.Trigger.TimeZone == "" {
			in.Trigger.TimeZone = "UTC" // answered as Azure's default
		}
		if !reflect.DeepEqual(normal(in.Trigger), normal(again.Trigger)) || again.DisplayName != "Nightly" {
			t.Errorf("%s: read back %+v, want %+v", tr, again.Trigger, in.Trigger)
		}
		if def := out.Properties["action"].(map[string]any)["jobDefinition"].(map[string]any); def["jobType"] != "Command" || def["command"] != "echo hi" || def["status"] != nil {
			t.Errorf("jobDefinition: %v", def)
		}
	}
}

// normal is a trigger with its case-insensitive words lower-cased.
func normal(tr *dschedule.Trigger) dschedule.Trigger {
	c := *tr
	c.Type, c.Frequency = strings.ToLower(c.Type), strings.ToLower(c.Frequency)
	if c.Schedule != nil {
		p := *c.Schedule
		if len(p.WeekDays) == 0 {
			p.WeekDays = nil
		}
		c.Schedule = &p
	}
	return c
}

// Field names Azure's property in the service's and the engine's errors,
// which speak the YAML's keys.
func TestField(t *testing.T) {
	for yaml, rest := range map[string]string{"trigger.type": "properties.trigger.triggerType", "trigger.time_zone": "properties.trigger.timeZone",
		"create_job.job.command": "properties.action.jobDefinition (command)", "other": "other"} {
		err := armschedule.Field(core.FieldErrorf(yaml, "is wrong"))
		if core.ErrorField(err) != rest || !strings.HasPrefix(core.ErrorMessage(err), rest+": ") && rest != "other" {
			t.Errorf("%s: %v (field %q), want %s", yaml, err, core.ErrorField(err), rest)
		}
	}
}
