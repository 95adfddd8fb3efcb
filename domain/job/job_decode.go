package job

import (
	"encoding/json"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/interactive"
	"github.com/shoal-ml/shoal/domain/job/jobdecode"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/domain/notify"
)

// Input and output types (jobio's, named here for the kinds' callers).
const (
	InputTypeURIFile   = jobio.TypeURIFile
	InputTypeURIFolder = jobio.TypeURIFolder
	InputTypeString    = jobio.TypeString
	InputTypeInteger   = jobio.TypeInteger
	InputTypeNumber    = jobio.TypeNumber
	InputTypeBoolean   = jobio.TypeBoolean
)

// JobTypeCommand is the only job type Shoal runs.
const JobTypeCommand = "command"

// JobKeys are the keys of a command job document that a user writes.
var JobKeys = compute.KeySchema{
	"$schema": nil, "name": nil, "type": nil, "display_name": nil, "experiment_name": nil,
	"description": nil, "tags": nil, "command": nil, "code": nil, "code_asset": nil, "environment": nil,
	"environment_variables": nil, "compute": nil, "inputs": nil, "outputs": nil,
	"resources":      compute.KeySchema{"instance_count": nil, "instance_type": nil, "shm_size": nil, "properties": nil},
	"distribution":   DistributionKeys,
	"limits":         compute.KeySchema{"timeout": nil},
	"queue_settings": compute.KeySchema{"job_tier": nil, "priority": nil},
	"retries":        nil,
	"identity":       nil, "services": nil, "notification_setting": nil, // their own decoders check their keys
}

// DecodeJobSpec decodes an Azure ML command job document (JSON with the
// snake_case YAML keys; the CLI converts YAML to JSON). Unknown keys, wrong
// types and malformed values are EINVALID errors naming the key. Read-only
// keys of `show` output are ignored. Literal inputs keep numbers as
// json.Number; {type: integer|number|string|boolean, default: X} inputs
// become literals; path inputs default to uri_folder and null outputs to a
// uri_folder output. Rules that do not depend on the JSON shape are checked
// by NormalizeJobSpec.
func DecodeJobSpec(data []byte) (*JobSpec, error) {
	d, err := jobdecode.ParseJobDocument(data)
	if err != nil {
		return nil, err
	}
	spec := &JobSpec{}
	// The type first: a sweep or pipeline job has keys of its own, and
	// "only command jobs" says more than "unknown key trial".
	if spec.Type, err = jobdecode.JobString(d["type"], "type"); err != nil {
		return nil, err
	}
	if t := strings.ToLower(strings.TrimSpace(spec.Type)); t != "" && t != JobTypeCommand {
		return nil, errOnlyCommandJobs(spec.Type)
	}
	if err := d.CheckKeys("command job", JobKeys); err != nil {
		return nil, err
	}
	fields := append(jobdecode.JobNameFields(&spec.Name, &spec.DisplayName, &spec.ExperimentName, &spec.Description),
		jobdecode.StringField("command", &spec.Command), jobdecode.StringField("code", &spec.Code), jobdecode.StringField("code_asset", &spec.CodeAsset), jobdecode.StringField("compute", &spec.Compute),
		jobdecode.TagsField(&spec.Tags),
		jobdecode.ValueField("environment", &spec.Environment, decodeJobEnvironment),
		jobdecode.ValueField("environment_variables", &spec.EnvironmentVariables, decodeJobEnvVars),
		jobdecode.ValueField("inputs", &spec.Inputs, jobio.DecodeInputs),
		jobdecode.ValueField("outputs", &spec.Outputs, jobio.DecodeOutputs),
		jobdecode.ValueField("resources", &spec.Resources, decodeJobResources),
		jobdecode.ValueField("distribution", &spec.Distribution, decodeJobDistribution),
		jobdecode.ValueField("limits", &spec.Limits, decodeJobLimits),
		jobdecode.ValueField("queue_settings", &spec.QueueSettings, decodeJobQueueSettings),
		jobdecode.ValueField("retries", &spec.Retries, decodeJobRetries),
		jobdecode.ValueField("identity", &spec.Identity, DecodeJobIdentity),
		jobdecode.ValueField("services", &spec.Services, interactive.DecodeJobServices),
		jobdecode.ValueField("notification_setting", &spec.NotificationSetting, DecodeNotificationSetting),
	)
	if err := d.DecodeFields("", fields...); err != nil {
		return nil, err
	}
	return spec, nil
}

// DecodeAsCommandJob decodes part of a document (a sweep's shared keys, a
// pipeline step's command keys) as DecodeJobSpec decodes a command job,
// so that every kind reads those keys alike; an error names its path in
// the whole document, under prefix ("jobs.train.").
func DecodeAsCommandJob(part jobdecode.JobDocument, prefix string) (*JobSpec, error) {
	data, err := json.Marshal(part)
	if err != nil { // the values were read from JSON: unreachable
		return nil, core.Errorf(core.EINVALID, "the job document is not valid (%s)", compute.JSONProblem(err))
	}
	spec, err := DecodeJobSpec(data)
	if err != nil {
		return nil, jobdecode.PrefixFieldError(prefix, err)
	}
	return spec, nil
}

// DecodeNotificationSetting reads a job's top-level notification_setting
// (every kind's), nil when absent.
func DecodeNotificationSetting(raw json.RawMessage) (*notify.NotificationSetting, error) {
	return notify.DecodeSetting(raw, "notification_setting")
}

// decodeJobRetries reads retries, nil when absent.
func decodeJobRetries(raw json.RawMessage) (*int, error) {
	if compute.NonNull(raw) == nil {
		return nil, nil
	}
	return compute.CheckInteger("retries", raw)
}

// decodeJobEnvironment keeps an environment reference (a string) or an
// inline environment (a mapping) as written.
func decodeJobEnvironment(raw json.RawMessage) (any, error) {
	switch jobdecode.JSONKind(raw) {
	case 0, 'n':
		return nil, nil
	case '"', '{':
		var v any
		if err := JobUnmarshalAny(raw, &v); err != nil {
			return nil, core.FieldErrorf("environment", "is not valid (%s)", compute.JSONProblem(err))
		}
		if s, ok := v.(string); ok && strings.TrimSpace(s) == "" {
			return nil, nil
		}
		return v, nil
	}
	return nil, core.FieldErrorf("environment", "must be an environment reference (azureml:<name>:<version> or azureml:<name>@latest) or a mapping with image, conda_file or build, got %s", compute.ShortJSON(raw))
}

// decodeJobEnvVars accepts string, number and boolean values.
func decodeJobEnvVars(raw json.RawMessage) (map[string]string, error) {
	if compute.NonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if jobdecode.JSONKind(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, core.FieldErrorf("environment_variables", "must be a mapping of variable names to values")
	}
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for _, k := range core.SortedKeys(m) {
		v, err := jobio.Text(m[k], JobKeyPath("environment_variables", k))
		if err != nil {
			return nil, core.FieldErrorf(JobKeyPath("environment_variables", k), "must be a string, number or boolean, got %s", compute.ShortJSON(m[k]))
		}
		out[k] = v
	}
	return out, nil
}

func decodeJobResources(raw json.RawMessage) (*JobResources, error) {
	if compute.NonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, core.FieldErrorf("resources", "must be a mapping")
	}
	var r JobResources
	if v := compute.NonNull(m["instance_count"]); v != nil {
		n, err := compute.CheckInteger("resources.instance_count", v)
		if err != nil {
			return nil, err
		}
		if *n < 1 {
			return nil, core.FieldErrorf("resources.instance_count", "must be 1 or more, got %d", *n)
		}
		r.InstanceCount = *n
	}
	var err error
	if r.InstanceType, err = jobdecode.JobString(m["instance_type"], "resources.instance_type"); err != nil {
		return nil, err
	}
	if r.ShmSize, err = jobio.Text(m["shm_size"], "resources.shm_size"); err != nil {
		return nil, err
	}
	// resources.properties is accepted and ignored.
	return &r, nil
}

func decodeJobLimits(raw json.RawMessage) (*JobLimits, error) {
	if compute.NonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, core.FieldErrorf("limits", "must be a mapping")
	}
	var l JobLimits
	n, err := compute.DecodeSeconds(m["timeout"])
	if err != nil {
		return nil, core.FieldErrorf("limits.timeout", "%s", err.Error())
	}
	if n != nil {
		if *n < 1 {
			return nil, core.FieldErrorf("limits.timeout", "must be at least 1 second, got %d", *n)
		}
		l.Timeout = *n
	}
	return &l, nil
}

func decodeJobQueueSettings(raw json.RawMessage) (*QueueSettings, error) {
	if compute.NonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, core.FieldErrorf("queue_settings", "must be a mapping")
	}
	var q QueueSettings
	var err error
	if q.JobTier, err = jobdecode.JobString(m["job_tier"], "queue_settings.job_tier"); err != nil {
		return nil, err
	}
	if q.Priority, err = jobdecode.JobString(m["priority"], "queue_settings.priority"); err != nil {
		return nil, err
	}
	return &q, nil
}
