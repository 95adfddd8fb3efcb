package sweepjob

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobdecode"
)

// sweepCommonKeys are the keys a sweep job shares with a command job;
// they are decoded by DecodeJobSpec so that both read them alike.
var sweepCommonKeys = map[string]bool{
	"$schema": true, "name": true, "display_name": true, "experiment_name": true, "description": true,
	"tags": true, "compute": true, "inputs": true, "outputs": true, "queue_settings": true, "identity": true,
	"notification_setting": true,
}

// sweepKeys are the keys of a sweep job document that a user writes: its
// own, whose mappings are checked here, and the shared ones, which
// DecodeJobSpec checks.
var sweepKeys = func() compute.KeySchema {
	k := compute.KeySchema{
		"type": nil, "trial": trialKeys, "search_space": nil, "sampling_algorithm": nil,
		"objective":         compute.KeySchema{"primary_metric": nil, "goal": nil},
		"limits":            compute.KeySchema{"max_total_trials": nil, "max_concurrent_trials": nil, "timeout": nil, "trial_timeout": nil},
		"early_termination": compute.KeySchema{"type": nil, "evaluation_interval": nil, "delay_evaluation": nil, "slack_factor": nil, "slack_amount": nil, "truncation_percentage": nil},
	}
	for c := range sweepCommonKeys {
		k[c] = nil
	}
	return k
}()

// trialKeys are the keys of a sweep's trial: the parts of a command job
// that are not the sweep's own (compute, inputs and outputs are).
var trialKeys = compute.KeySchema{
	"command": nil, "code": nil, "code_asset": nil, "environment": nil, "environment_variables": nil,
	"resources":    job.JobKeys["resources"],
	"distribution": job.JobKeys["distribution"],
}

var (
	searchParamKeys       = compute.KeySchema{"type": nil, "values": nil, "upper": nil, "min_value": nil, "max_value": nil, "mu": nil, "sigma": nil, "q": nil}
	samplingAlgorithmKeys = compute.KeySchema{"type": nil, "seed": nil, "rule": nil}
)

// DecodeSweepSpec decodes an Azure ML sweep job document (JSON with the
// snake_case YAML keys). The keys a sweep shares with a command job
// (name, compute, inputs, outputs...) and its trial are decoded as a
// command job's are; an error about the trial names its path under
// trial (trial.command). Unknown keys, wrong types and malformed values
// are EINVALID errors naming the key. Rules that do not depend on the
// JSON shape are checked by NormalizeSweepSpec.
func DecodeSweepSpec(data []byte) (*job.SweepSpec, error) {
	d, err := jobdecode.ParseJobDocument(data)
	if err != nil {
		return nil, err
	}
	spec := &job.SweepSpec{}
	if spec.Type, err = d.RequireType(job.JobTypeSweep); err != nil {
		return nil, err
	}
	// The keys Azure has and Shoal does not support are left to
	// DecodeJobSpec, which refuses them after the sweep's own keys are
	// checked.
	supported := d.Pick(func(k string) bool { return jobdecode.JobUnsupportedKeys[k] == "" })
	if err := supported.CheckKeys("sweep job", sweepKeys); err != nil {
		return nil, err
	}
	base, err := job.DecodeAsCommandJob(d.Pick(func(k string) bool { return sweepCommonKeys[k] || jobdecode.JobUnsupportedKeys[k] != "" }), "")
	if err != nil {
		return nil, err
	}
	spec.Name, spec.DisplayName, spec.ExperimentName, spec.Description = base.Name, base.DisplayName, base.ExperimentName, base.Description
	spec.Tags, spec.Compute, spec.Inputs, spec.Outputs, spec.QueueSettings = base.Tags, base.Compute, base.Inputs, base.Outputs, base.QueueSettings
	spec.Identity, spec.NotificationSetting = base.Identity, base.NotificationSetting

	err = d.DecodeFields("",
		jobdecode.ValueField("trial", &spec.Trial, decodeSweepTrial),
		jobdecode.ValueField("search_space", &spec.SearchSpace, decodeSearchSpace),
		jobdecode.ValueField("sampling_algorithm", &spec.SamplingAlgorithm, decodeSamplingAlgorithm),
		jobdecode.ValueField("objective", &spec.Objective, decodeObjective),
		jobdecode.ValueField("limits", &spec.Limits, decodeSweepLimits),
		jobdecode.ValueField("early_termination", &spec.EarlyTermination, decodeEarlyTermination),
	)
	if err != nil {
		return nil, err
	}
	return spec, nil
}

// decodeSweepTrial decodes the trial as a command job, so that its keys
// read as a command job's do; an error names its path under trial.
func decodeSweepTrial(raw json.RawMessage) (*job.SweepTrial, error) {
	switch jobdecode.JSONKind(raw) {
	case 0, 'n':
		return nil, core.FieldErrorf("trial", "is required: the command job each trial runs, with ${{search_space.<name>}} in its command")
	case '{':
	default:
		return nil, core.FieldErrorf("trial", "must be a mapping with command, code, environment, ..., got %s", compute.ShortJSON(raw))
	}
	if err := compute.CheckKeys(raw, "trial", trialKeys); err != nil {
		return nil, err
	}
	js, err := job.DecodeJobSpec(raw)
	if err != nil {
		return nil, jobdecode.PrefixFieldError("trial.", err)
	}
	return &job.SweepTrial{
		Command: js.Command, Code: js.Code, CodeAsset: js.CodeAsset, Environment: js.Environment,
		EnvironmentVariables: js.EnvironmentVariables, Resources: js.Resources, Distribution: js.Distribution,
	}, nil
}

func decodeSearchSpace(raw json.RawMessage) (map[string]*job.SearchParam, error) {
	switch jobdecode.JSONKind(raw) {
	case 0, 'n':
		return nil, core.FieldErrorf("search_space", "is required: a mapping of hyperparameter names to distributions, e.g. lr: {type: uniform, min_value: 0.001, max_value: 0.1}")
	case '{':
	default:
		return nil, core.FieldErrorf("search_space", "must be a mapping of hyperparameter names to distributions, got %s", compute.ShortJSON(raw))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, core.FieldErrorf("search_space", "must be a mapping of hyperparameter names to distributions")
	}
	out := make(map[string]*job.SearchParam, len(m))
	for _, name := range core.SortedKeys(m) {
		p, err := decodeSearchParam(job.JobKeyPath("search_space", name), m[name])
		if err != nil {
			return nil, err
		}
		out[name] = p
	}
	return out, nil
}

func decodeSearchParam(field string, raw json.RawMessage) (*job.SearchParam, error) {
	if jobdecode.JSONKind(raw) != '{' {
		return nil, core.FieldErrorf(field, "must be a mapping with type and the distribution's parameters, e.g. {type: choice, values: [16, 32]}, got %s", compute.ShortJSON(raw))
	}
	m, err := jobdecode.CheckedMapping(raw, field, searchParamKeys)
	if err != nil {
		return nil, err
	}
	p := &job.SearchParam{}
	if p.Type, err = jobdecode.JobString(m["type"], field+".type"); err != nil {
		return nil, err
	}
	if raw := compute.NonNull(m["values"]); raw != nil {
		if p.Values, err = decodeChoiceValues(field+".values", raw); err != nil {
			return nil, err
		}
	}
	if raw := compute.NonNull(m["upper"]); raw != nil {
		n, err := decodeInt64(field+".upper", raw)
		if err != nil {
			return nil, err
		}
		p.Upper = &n
	}
	for _, f := range []struct {
		key string
		dst **float64
	}{{"min_value", &p.MinValue}, {"max_value", &p.MaxValue}, {"mu", &p.Mu}, {"sigma", &p.Sigma}, {"q", &p.Q}} {
		if raw := compute.NonNull(m[f.key]); raw != nil {
			v, err := decodeFloat(field+"."+f.key, raw)
			if err != nil {
				return nil, err
			}
			*f.dst = &v
		}
	}
	return p, nil
}

// decodeChoiceValues keeps numbers as json.Number so that a value is
// rendered into the command as the user wrote it.
func decodeChoiceValues(field string, raw json.RawMessage) ([]any, error) {
	if jobdecode.JSONKind(raw) != '[' {
		return nil, core.FieldErrorf(field, "must be a list of values, got %s", compute.ShortJSON(raw))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, core.FieldErrorf(field, "must be a list of values")
	}
	out := make([]any, 0, len(items))
	for i, it := range items {
		f := field + "[" + strconv.Itoa(i) + "]"
		switch jobdecode.JSONKind(it) {
		case '{', '[':
			return nil, core.FieldErrorf(f, "must be a number, string or boolean; nested search spaces are not supported")
		case 'n':
			return nil, core.FieldErrorf(f, "must be a number, string or boolean, not null")
		}
		var v any
		if err := job.JobUnmarshalAny(it, &v); err != nil {
			return nil, core.FieldErrorf(f, "is not valid (%s)", compute.JSONProblem(err))
		}
		out = append(out, v)
	}
	return out, nil
}

// decodeFloat reads a finite number; a string holding one is accepted,
// since YAML 1.1 reads 1e-3 (no dot) as a string.
func decodeFloat(field string, raw json.RawMessage) (float64, error) {
	var s string
	switch k := jobdecode.JSONKind(raw); {
	case jobdecode.IsJSONNumberKind(k):
		s = string(bytes.TrimSpace(raw))
	case k == '"':
		if json.Unmarshal(raw, &s) != nil {
			return 0, core.FieldErrorf(field, "must be a number, got %s", compute.ShortJSON(raw))
		}
		s = strings.TrimSpace(s)
	default:
		return 0, core.FieldErrorf(field, "must be a number, got %s", compute.ShortJSON(raw))
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, core.FieldErrorf(field, "must be a finite number, got %s", compute.ShortJSON(raw))
	}
	return f, nil
}

// decodeInt64 reads a whole number that fits 64 bits.
func decodeInt64(field string, raw json.RawMessage) (int64, error) {
	if !jobdecode.IsJSONNumberKind(jobdecode.JSONKind(raw)) {
		return 0, core.FieldErrorf(field, "must be a whole number, got %s", compute.ShortJSON(raw))
	}
	s := string(bytes.TrimSpace(raw))
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
		return 0, core.FieldErrorf(field, "must be a whole number that fits 64 bits, got %s", compute.ShortJSON(raw))
	}
	return int64(f), nil
}

// decodeSamplingAlgorithm accepts Azure ML's two spellings: a name
// (sampling_algorithm: random) or a mapping with type, seed and rule.
func decodeSamplingAlgorithm(raw json.RawMessage) (*job.SamplingAlgorithm, error) {
	switch jobdecode.JSONKind(raw) {
	case 0, 'n':
		return nil, core.FieldErrorf("sampling_algorithm", "is required: random, grid or bayesian")
	case '"':
		t, err := jobdecode.JobString(raw, "sampling_algorithm")
		if err != nil {
			return nil, err
		}
		return &job.SamplingAlgorithm{Type: t}, nil
	case '{':
	default:
		return nil, core.FieldErrorf("sampling_algorithm", "must be random, grid or bayesian, or a mapping with type (and seed, rule for random), got %s", compute.ShortJSON(raw))
	}
	m, err := jobdecode.CheckedMapping(raw, "sampling_algorithm", samplingAlgorithmKeys)
	if err != nil {
		return nil, err
	}
	a := &job.SamplingAlgorithm{}
	if a.Type, err = jobdecode.JobString(m["type"], "sampling_algorithm.type"); err != nil {
		return nil, err
	}
	if a.Rule, err = jobdecode.JobString(m["rule"], "sampling_algorithm.rule"); err != nil {
		return nil, err
	}
	if raw := compute.NonNull(m["seed"]); raw != nil {
		n, err := decodeInt64("sampling_algorithm.seed", raw)
		if err != nil {
			return nil, err
		}
		a.Seed = &n
	}
	return a, nil
}

func decodeObjective(raw json.RawMessage) (*job.Objective, error) {
	switch jobdecode.JSONKind(raw) {
	case 0, 'n':
		return nil, core.FieldErrorf("objective", "is required: primary_metric (the metric trials log) and goal (maximize or minimize)")
	case '{':
	default:
		return nil, core.FieldErrorf("objective", "must be a mapping with primary_metric and goal, got %s", compute.ShortJSON(raw))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, core.FieldErrorf("objective", "must be a mapping")
	}
	o := &job.Objective{}
	var err error
	if o.PrimaryMetric, err = jobdecode.JobString(m["primary_metric"], "objective.primary_metric"); err != nil {
		return nil, err
	}
	if o.Goal, err = jobdecode.JobString(m["goal"], "objective.goal"); err != nil {
		return nil, err
	}
	return o, nil
}

func decodeSweepLimits(raw json.RawMessage) (*job.SweepLimits, error) {
	switch jobdecode.JSONKind(raw) {
	case 0, 'n':
		return nil, nil
	case '{':
	default:
		return nil, core.FieldErrorf("limits", "must be a mapping, got %s", compute.ShortJSON(raw))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, core.FieldErrorf("limits", "must be a mapping")
	}
	l := &job.SweepLimits{}
	for _, f := range []struct {
		key string
		dst *int
	}{{"max_total_trials", &l.MaxTotalTrials}, {"max_concurrent_trials", &l.MaxConcurrentTrials}} {
		if raw := compute.NonNull(m[f.key]); raw != nil {
			n, err := compute.CheckInteger("limits."+f.key, raw)
			if err != nil {
				return nil, err
			}
			if *n < 1 {
				return nil, core.FieldErrorf("limits."+f.key, "must be 1 or more, got %d", *n)
			}
			*f.dst = *n
		}
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{"timeout", &l.Timeout}, {"trial_timeout", &l.TrialTimeout}} {
		if compute.NonNull(m[f.key]) == nil || len(bytes.TrimSpace(m[f.key])) == 0 {
			continue
		}
		n, err := compute.DecodeSeconds(m[f.key])
		if err != nil {
			return nil, core.FieldErrorf("limits."+f.key, "%s", err.Error())
		}
		if n != nil {
			if *n < 1 {
				return nil, core.FieldErrorf("limits."+f.key, "must be at least 1 second, got %d", *n)
			}
			*f.dst = *n
		}
	}
	return l, nil
}

func decodeEarlyTermination(raw json.RawMessage) (*job.EarlyTermination, error) {
	switch jobdecode.JSONKind(raw) {
	case 0, 'n':
		return nil, nil
	case '{':
	default:
		return nil, core.FieldErrorf("early_termination", "must be a mapping with type (bandit, median_stopping or truncation_selection), got %s", compute.ShortJSON(raw))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, core.FieldErrorf("early_termination", "must be a mapping")
	}
	p := &job.EarlyTermination{}
	var err error
	if p.Type, err = jobdecode.JobString(m["type"], "early_termination.type"); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{"evaluation_interval", &p.EvaluationInterval}, {"delay_evaluation", &p.DelayEvaluation}, {"truncation_percentage", &p.TruncationPercentage}} {
		if raw := compute.NonNull(m[f.key]); raw != nil {
			n, err := compute.CheckInteger("early_termination."+f.key, raw)
			if err != nil {
				return nil, err
			}
			if *n < 0 {
				return nil, core.FieldErrorf("early_termination."+f.key, "must be 0 or more, got %d", *n)
			}
			*f.dst = *n
		}
	}
	for _, f := range []struct {
		key string
		dst **float64
	}{{"slack_factor", &p.SlackFactor}, {"slack_amount", &p.SlackAmount}} {
		if raw := compute.NonNull(m[f.key]); raw != nil {
			v, err := decodeFloat("early_termination."+f.key, raw)
			if err != nil {
				return nil, err
			}
			*f.dst = &v
		}
	}
	return p, nil
}
