package schedule

import (
	"encoding/json"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// Decoding reads a schedule's YAML keys as JSON (the CLI converts YAML to
// JSON), in sorted key order so that the first error is the same on
// every run; a key that is not Azure's is refused with the closest one,
// and the read-only keys of show output are accepted and ignored, so
// that `shoal schedule show -o yaml` can be applied again.

// scheduleKeys are a schedule document's keys.
var scheduleKeys = []string{"name", "display_name", "description", "tags", "properties", "trigger", "create_job", "invoke_batch_endpoint"}

// readOnlyKeys are keys of show output, ignored on input (is_enabled is
// changed by `shoal schedule enable` and `disable`, as Azure's CLI does).
var readOnlyKeys = map[string]bool{"$schema": true, "id": true, "workspace": true, "is_enabled": true, "created_by": true, "created_on": true,
	"updated_by": true, "updated_on": true, "version": true, "status": true, "creation_context": true, "provisioning_state": true,
	"updated_by_principal": true, "created_by_principal": true}

var (
	triggerKeys = []string{"type", "expression", "start_time", "end_time", "time_zone", "frequency", "interval", "schedule"}
	patternKeys = []string{"hours", "minutes", "week_days", "month_days"}
	invokeKeys  = []string{"endpoint", "deployment", "input", "input_type", "experiment_name", "output_path"}
)

// MaxNameLength bounds a schedule's name, so that the name of the job a
// firing submits (FiredJobName: the name and a 14-character time) fits
// a job name's 255 characters.
const MaxNameLength = 200

var nameRE = core.LazyRegexp(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// ValidateName applies a schedule name's rule: 1 to MaxNameLength
// letters, digits, '-' and '_', starting with a letter or a digit.
func ValidateName(name string) error {
	switch {
	case name == "":
		return core.FieldErrorf("name", "is required")
	case len(name) > MaxNameLength:
		return core.FieldErrorf("name", "must be at most %d characters long (it has %d)", MaxNameLength, len(name))
	case !nameRE.MatchString(name):
		return core.FieldErrorf("name", "%q may contain only letters, digits, '-' and '_', and must start with a letter or a digit", core.Short(name))
	}
	return nil
}

type doc map[string]json.RawMessage

// parse reads a mapping at path ("" for the whole document) and checks
// its keys against allowed (core.DecodeMapping).
func parse(raw json.RawMessage, path, what string, allowed []string) (doc, error) {
	return core.DecodeMapping(raw, path, what, allowed, func(k string) bool { return readOnlyKeys[k] })
}

func isNull(raw json.RawMessage) bool { return core.IsNullJSON(raw) }

// str reads a string (null or absent: "").
func str(raw json.RawMessage, field string) (string, error) { return core.DecodeString(raw, field) }

// Decode decodes a schedule document (Azure's schedule YAML as JSON) and
// checks its shape: the keys, the name, exactly one of create_job and
// invoke_batch_endpoint. The trigger is compiled, and the job checked,
// by the service (decide/schedule.CompileTrigger, the job service's
// validation), which needs the engine and the store.
func Decode(data []byte) (*JobSchedule, error) {
	d, err := parse(data, "", "schedule", scheduleKeys)
	if err != nil {
		return nil, err
	}
	s := &JobSchedule{IsEnabled: true}
	for key, to := range map[string]*string{"name": &s.Name, "display_name": &s.DisplayName, "description": &s.Description} {
		if *to, err = str(d[key], key); err != nil {
			return nil, err
		}
	}
	if err := ValidateName(s.Name); err != nil {
		return nil, err
	}
	if s.Tags, err = core.DecodeTags(d["tags"]); err != nil {
		return nil, err
	}
	if s.Properties, err = core.DecodeTags(d["properties"]); err != nil {
		return nil, core.FieldErrorf("properties", "must be a mapping of names to values")
	}
	if s.Trigger, err = decodeTrigger(d["trigger"]); err != nil {
		return nil, err
	}
	hasJob, hasInvoke := !isNull(d["create_job"]), !isNull(d["invoke_batch_endpoint"])
	switch {
	case hasJob && hasInvoke:
		return nil, core.FieldErrorf("invoke_batch_endpoint", "cannot be given with create_job: a schedule does one thing")
	case hasJob:
		s.CreateJob, err = decodeCreateJob(d["create_job"])
	case hasInvoke:
		s.InvokeBatchEndpoint, err = decodeInvoke(d["invoke_batch_endpoint"])
	default:
		return nil, core.FieldErrorf("create_job", "is required: the job each firing submits (./job.yml, azureml:<job>, or {job: ./job.yml, <overrides>}), or invoke_batch_endpoint")
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// decodeTrigger reads `trigger`, refusing keys it does not know.
func decodeTrigger(raw json.RawMessage) (*Trigger, error) {
	if isNull(raw) {
		return nil, core.FieldErrorf("trigger", "is required: a cron trigger {type: cron, expression: \"0 2 * * *\"} or a recurrence {type: recurrence, frequency: day, interval: 1}")
	}
	d, err := parse(raw, "trigger.", "trigger", triggerKeys)
	if err != nil {
		return nil, err
	}
	if !isNull(d["schedule"]) {
		if _, err := parse(d["schedule"], "trigger.schedule.", "recurrence schedule", patternKeys); err != nil {
			return nil, err
		}
	}
	var tr Trigger
	for _, k := range core.SortedKeys(d) {
		if isNull(d[k]) {
			continue
		}
		one, _ := json.Marshal(map[string]json.RawMessage{k: d[k]})
		if err := json.Unmarshal(one, &tr); err != nil {
			return nil, core.FieldErrorf("trigger."+k, "%s", fieldMessage(err))
		}
	}
	return &tr, nil
}

// fieldMessage is a JSON decoding error in a user's words.
func fieldMessage(err error) string {
	var te *json.UnmarshalTypeError
	if errorsAs(err, &te) {
		return "must be " + typeWord(te.Type.Kind().String())
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

func typeWord(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "int", "int64":
		return "a whole number"
	case "struct", "map", "ptr":
		return "a mapping"
	case "slice":
		return "a list"
	}
	return "a " + kind
}

// decodeInvoke reads `invoke_batch_endpoint`.
func decodeInvoke(raw json.RawMessage) (*InvokeBatchEndpoint, error) {
	d, err := parse(raw, "invoke_batch_endpoint.", "batch endpoint invocation", invokeKeys)
	if err != nil {
		return nil, err
	}
	inv := &InvokeBatchEndpoint{}
	for key, to := range map[string]*string{"endpoint": &inv.Endpoint, "deployment": &inv.Deployment, "input": &inv.Input,
		"input_type": &inv.InputType, "experiment_name": &inv.ExperimentName, "output_path": &inv.OutputPath} {
		if *to, err = str(d[key], "invoke_batch_endpoint."+key); err != nil {
			return nil, err
		}
	}
	inv.Endpoint = strings.TrimPrefix(inv.Endpoint, "azureml:")
	switch {
	case inv.Endpoint == "":
		return nil, core.FieldErrorf("invoke_batch_endpoint.endpoint", "is required: the batch endpoint's name")
	case inv.Input == "":
		return nil, core.FieldErrorf("invoke_batch_endpoint.input", "is required: a data asset (azureml:<name>@latest) or a datastore path (azureml://datastores/<name>/paths/<path>)")
	}
	return inv, nil
}
