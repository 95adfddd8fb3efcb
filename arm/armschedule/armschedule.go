// Package armschedule translates Azure's schedule resource (2022-10-01's
// Schedule: a trigger and an action, CreateJob or InvokeBatchEndpoint) to
// and from the schedule document package domain/schedule decodes, so
// that a schedule azure-ai-ml PUTs passes the same rules as one `shoal
// schedule create -f` sends, and its jobDefinition the same translation
// as a job PUT (package armjob). Package arm serves the routes.
package armschedule

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/shoal-ml/shoal/arm/armjob"
	"github.com/shoal-ml/shoal/domain/core"
	dschedule "github.com/shoal-ml/shoal/domain/schedule"
)

// ResourceType is a schedule's ARM resource type.
const ResourceType = "Microsoft.MachineLearningServices/workspaces/schedules"

// object is a JSON object read at a path, for errors naming Azure's
// property.
type object struct {
	path string
	m    map[string]json.RawMessage
}

// readObject reads raw as an object at path; null or absent is an empty
// object.
func readObject(path string, raw json.RawMessage) (object, error) {
	o := object{path: path, m: map[string]json.RawMessage{}}
	t := strings.TrimSpace(string(raw))
	if t == "" || t == "null" {
		return o, nil
	}
	if err := json.Unmarshal(raw, &o.m); err != nil || o.m == nil {
		return o, core.FieldErrorf(path, "must be an object")
	}
	return o, nil
}

// check refuses keys not in known, naming the closest.
func (o object) check(what string, known ...string) error {
	for _, k := range core.SortedKeys(o.m) {
		ok := false
		for _, n := range known {
			ok = ok || n == k
		}
		if !ok {
			return core.FieldErrorf(o.path+"."+k, "unknown property %q%s in %s; known: %s", k, core.DidYouMean(k, known), what, strings.Join(known, ", "))
		}
	}
	return nil
}

// set copies the property named rest, when present and not null, to the
// document's key yaml.
func (o object) set(d map[string]json.RawMessage, rest, yaml string) {
	if v, ok := o.m[rest]; ok && strings.TrimSpace(string(v)) != "null" {
		d[yaml] = v
	}
}

// str reads a string property ("" when absent or null).
func (o object) str(k string) (string, error) {
	v, ok := o.m[k]
	if !ok || strings.TrimSpace(string(v)) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", core.FieldErrorf(o.path+"."+k, "must be a string")
	}
	return s, nil
}

// scheduleKeys are a Schedule's properties; provisioningState is
// answered by Shoal and accepted back.
var scheduleKeys = []string{"displayName", "description", "tags", "properties", "isEnabled", "trigger", "action", "provisioningState"}

var (
	triggerKeys = []string{"triggerType", "expression", "startTime", "endTime", "timeZone", "frequency", "interval", "schedule"}
	patternKeys = []string{"hours", "minutes", "weekDays", "monthDays"}
	actionKeys  = []string{"actionType", "jobDefinition", "endpointInvocationDefinition"}
	invokeKeys  = []string{"endpoint", "deployment", "input", "inputType", "experimentName", "outputPath"}
)

// FromScheduleResource reads the body of a PUT …/schedules/{name} in
// workspace ws: the schedule, and isEnabled when the body says it (nil:
// keep it as it is, enabled for a new schedule). azure-ai-ml's
// begin_enable and begin_disable PUT the schedule they read with
// isEnabled changed. A jobDefinition naming an existing job by
// sourceJobId alone is that job (azureml:<job>); one with a job's
// properties is translated as a job PUT's (armjob.JobDocument). codes
// resolves a command job's codeId.
func FromScheduleResource(ctx context.Context, ws, name string, body []byte, codes armjob.CodeResolver) (*dschedule.JobSchedule, *bool, error) {
	top, err := readObject("body", body)
	if err != nil {
		return nil, nil, err
	}
	if _, ok := top.m["properties"]; !ok {
		return nil, nil, core.FieldErrorf("properties", "is required: the schedule's trigger and action")
	}
	p, err := readObject("properties", top.m["properties"])
	if err != nil {
		return nil, nil, err
	}
	if err := p.check("a schedule", scheduleKeys...); err != nil {
		return nil, nil, err
	}
	d := map[string]json.RawMessage{"name": mustJSON(name)}
	p.set(d, "displayName", "display_name")
	p.set(d, "description", "description")
	p.set(d, "tags", "tags")
	p.set(d, "properties", "properties")
	if d["trigger"], err = triggerDoc(p.m["trigger"]); err != nil {
		return nil, nil, err
	}
	if err := actionDoc(ctx, ws, name, p.m["action"], codes, d); err != nil {
		return nil, nil, err
	}
	var enabled *bool
	if v, ok := p.m["isEnabled"]; ok && strings.TrimSpace(string(v)) != "null" {
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return nil, nil, core.FieldErrorf("properties.isEnabled", "must be true or false")
		}
		enabled = &b
	}
	sc, err := dschedule.Decode(mustJSON(d))
	if err != nil {
		return nil, nil, Field(err)
	}
	return sc, enabled, nil
}

// triggerDoc reads Azure's CronTrigger or RecurrenceTrigger into the
// YAML's trigger.
func triggerDoc(raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil {
		return nil, core.FieldErrorf("properties.trigger", "is required: {triggerType: Cron, expression: \"0 2 * * *\"} or {triggerType: Recurrence, frequency: Day, interval: 1, schedule: {hours: [2], minutes: [0]}}")
	}
	t, err := readObject("properties.trigger", raw)
	if err != nil {
		return nil, err
	}
	if err := t.check("a trigger", triggerKeys...); err != nil {
		return nil, err
	}
	typ, err := t.str("triggerType")
	if err != nil {
		return nil, err
	}
	freq, err := t.str("frequency")
	if err != nil {
		return nil, err
	}
	d := map[string]json.RawMessage{}
	if typ != "" {
		d["type"] = mustJSON(strings.ToLower(typ))
	}
	if freq != "" {
		d["frequency"] = mustJSON(strings.ToLower(freq))
	}
	for _, k := range [][2]string{{"expression", "expression"}, {"startTime", "start_time"}, {"endTime", "end_time"}, {"timeZone", "time_zone"}, {"interval", "interval"}} {
		t.set(d, k[0], k[1])
	}
	if raw, ok := t.m["schedule"]; ok && strings.TrimSpace(string(raw)) != "null" {
		s, err := readObject("properties.trigger.schedule", raw)
		if err != nil {
			return nil, err
		}
		if err := s.check("a recurrence schedule", patternKeys...); err != nil {
			return nil, err
		}
		pd := map[string]json.RawMessage{}
		for _, k := range [][2]string{{"hours", "hours"}, {"minutes", "minutes"}, {"weekDays", "week_days"}, {"monthDays", "month_days"}} {
			s.set(pd, k[0], k[1])
		}
		d["schedule"] = mustJSON(pd)
	}
	return mustJSON(d), nil
}

// actionDoc reads the action into the document's create_job or
// invoke_batch_endpoint.
func actionDoc(ctx context.Context, ws, name string, raw json.RawMessage, codes armjob.CodeResolver, d map[string]json.RawMessage) error {
	if raw == nil {
		return core.FieldErrorf("properties.action", "is required: {actionType: CreateJob, jobDefinition: <a job's properties>}")
	}
	a, err := readObject("properties.action", raw)
	if err != nil {
		return err
	}
	if err := a.check("an action", actionKeys...); err != nil {
		return err
	}
	typ, err := a.str("actionType")
	if err != nil {
		return err
	}
	switch strings.ToLower(typ) {
	case "createjob":
		return jobDefinitionDoc(ctx, ws, name, a.m["jobDefinition"], codes, d)
	case "invokebatchendpoint":
		inv, err := readObject("properties.action.endpointInvocationDefinition", a.m["endpointInvocationDefinition"])
		if err != nil {
			return err
		}
		if err := inv.check("an endpoint invocation", invokeKeys...); err != nil {
			return err
		}
		id := map[string]json.RawMessage{}
		for _, k := range [][2]string{{"endpoint", "endpoint"}, {"deployment", "deployment"}, {"input", "input"}, {"inputType", "input_type"}, {"experimentName", "experiment_name"}, {"outputPath", "output_path"}} {
			inv.set(id, k[0], k[1])
		}
		d["invoke_batch_endpoint"] = mustJSON(id)
		return nil
	case "":
		return core.FieldErrorf("properties.action.actionType", "is required: CreateJob or InvokeBatchEndpoint")
	}
	return core.FieldErrorf("properties.action.actionType", "%q is not CreateJob or InvokeBatchEndpoint (the actions Shoal's schedules take)", core.Short(typ))
}

// jobDefinitionDoc reads a CreateJob action's jobDefinition: an existing
// job by sourceJobId alone, or a job's properties.
func jobDefinitionDoc(ctx context.Context, ws, name string, raw json.RawMessage, codes armjob.CodeResolver, d map[string]json.RawMessage) error {
	if raw == nil || strings.TrimSpace(string(raw)) == "null" {
		return core.FieldErrorf("properties.action.jobDefinition", "is required: the job each firing submits")
	}
	def, err := readObject("properties.action.jobDefinition", raw)
	if err != nil {
		return err
	}
	source, err := def.str("sourceJobId")
	if err != nil {
		return err
	}
	delete(def.m, "sourceJobId")
	if source != "" {
		// Checked even beside a job's properties (what azure-ai-ml PUTs
		// back of a schedule it read), where the properties are the job.
		job, err := armjob.JobRef("properties.action.jobDefinition.sourceJobId", ws, source)
		if err != nil {
			return err
		}
		if !hasJobBody(def) {
			d["create_job"] = mustJSON("azureml:" + job)
			return nil
		}
	}
	doc, err := armjob.JobDocument(ctx, ws, name, mustJSON(map[string]any{"properties": def.m}), codes)
	if err != nil {
		return underAction(err)
	}
	d["create_job"] = doc
	return nil
}

// hasJobBody reports whether a jobDefinition says more than the keys
// azure-ai-ml's reference to an existing job carries (jobType, and
// defaults it fills in).
func hasJobBody(def object) bool {
	for k := range def.m {
		switch k {
		case "jobType", "experimentName", "isArchived", "properties", "tags", "status", "services":
		default:
			return true
		}
	}
	return false
}

// underAction names a job translation's error under the action's
// jobDefinition ("properties.jobs" → "properties.action.jobDefinition.jobs").
func underAction(err error) error {
	ce, ok := err.(*core.Error)
	if !ok || ce.Field == "" {
		return err
	}
	f := "properties.action.jobDefinition" + strings.TrimPrefix(strings.TrimPrefix(ce.Field, "properties"), "body")
	return &core.Error{Code: ce.Code, Field: f, Message: strings.Replace(ce.Message, ce.Field, f, 1)}
}

// fieldNames are the schedule document's keys as Azure's properties.
var fieldNames = map[string]string{
	"name": "name", "display_name": "properties.displayName", "description": "properties.description", "tags": "properties.tags",
	"properties": "properties.properties", "trigger": "properties.trigger", "trigger.type": "properties.trigger.triggerType",
	"trigger.expression": "properties.trigger.expression", "trigger.start_time": "properties.trigger.startTime",
	"trigger.end_time": "properties.trigger.endTime", "trigger.time_zone": "properties.trigger.timeZone",
	"trigger.frequency": "properties.trigger.frequency", "trigger.interval": "properties.trigger.interval",
	"trigger.schedule": "properties.trigger.schedule", "trigger.schedule.hours": "properties.trigger.schedule.hours",
	"trigger.schedule.minutes": "properties.trigger.schedule.minutes", "trigger.schedule.week_days": "properties.trigger.schedule.weekDays",
	"trigger.schedule.month_days": "properties.trigger.schedule.monthDays", "create_job": "properties.action.jobDefinition",
	"create_job.job": "properties.action.jobDefinition", "invoke_batch_endpoint": "properties.action.endpointInvocationDefinition",
	"invoke_batch_endpoint.endpoint":   "properties.action.endpointInvocationDefinition.endpoint",
	"invoke_batch_endpoint.input":      "properties.action.endpointInvocationDefinition.input",
	"invoke_batch_endpoint.deployment": "properties.action.endpointInvocationDefinition.deployment",
}

// Field renames a schedule document's key in an error (of the decoder,
// the trigger's engine or the service) to Azure's property, so that an
// SDK user reads the name they wrote.
func Field(err error) error {
	ce, ok := err.(*core.Error)
	if !ok || ce.Field == "" {
		return err
	}
	n, ok := fieldNames[ce.Field]
	if !ok {
		if rest, isJob := strings.CutPrefix(ce.Field, "create_job.job."); isJob {
			n = "properties.action.jobDefinition (" + rest + ")"
		} else {
			return err
		}
	}
	return &core.Error{Code: ce.Code, Field: n, Message: strings.Replace(ce.Message, ce.Field, n, 1)}
}

// mustJSON marshals what always marshals (strings, maps of raw JSON).
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // unreachable: only strings and maps of them
	}
	return b
}
