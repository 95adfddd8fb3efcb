package shoal

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
)

// sweepCommonKeys are the keys a sweep job shares with a command job;
// they are decoded by DecodeJobSpec so that both read them alike.
var sweepCommonKeys = map[string]bool{
	"$schema": true, "name": true, "display_name": true, "experiment_name": true, "description": true,
	"tags": true, "compute": true, "inputs": true, "outputs": true, "queue_settings": true,
}

// sweepOwnKeys are the keys only a sweep job has.
var sweepOwnKeys = keySchema{
	"type": nil, "trial": trialKeys, "search_space": nil, "sampling_algorithm": nil,
	"objective":         keySchema{"primary_metric": nil, "goal": nil},
	"limits":            keySchema{"max_total_trials": nil, "max_concurrent_trials": nil, "timeout": nil, "trial_timeout": nil},
	"early_termination": keySchema{"type": nil, "evaluation_interval": nil, "delay_evaluation": nil, "slack_factor": nil, "slack_amount": nil, "truncation_percentage": nil},
}

// trialKeys are the keys of a sweep's trial: the parts of a command job
// that are not the sweep's own (compute, inputs and outputs are).
var trialKeys = keySchema{
	"command": nil, "code": nil, "environment": nil, "environment_variables": nil,
	"resources":    jobKeys["resources"],
	"distribution": jobKeys["distribution"],
}

var (
	searchParamKeys       = keySchema{"type": nil, "values": nil, "upper": nil, "min_value": nil, "max_value": nil, "mu": nil, "sigma": nil, "q": nil}
	samplingAlgorithmKeys = keySchema{"type": nil, "seed": nil, "rule": nil}
)

// DecodeSweepSpec decodes an Azure ML sweep job document (JSON with the
// snake_case YAML keys). The keys a sweep shares with a command job
// (name, compute, inputs, outputs...) and its trial are decoded as a
// command job's are; an error about the trial names its path under
// trial (trial.command). Unknown keys, wrong types and malformed values
// are EINVALID errors naming the key. Rules that do not depend on the
// JSON shape are checked by NormalizeSweepSpec.
func DecodeSweepSpec(data []byte) (*SweepSpec, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, Errorf(EINVALID, "the job document is empty")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, Errorf(EINVALID, "the job document must be a mapping of keys to values, got %s", jsonValueName(te.Value))
		}
		return nil, Errorf(EINVALID, "the job document is not valid JSON (%s)", jsonProblem(err))
	}
	if obj == nil {
		return nil, Errorf(EINVALID, "the job document must be a mapping of keys to values, got null")
	}
	spec := &SweepSpec{}
	var err error
	if spec.Type, err = jobString(obj["type"], "type"); err != nil {
		return nil, err
	}
	if t := strings.ToLower(strings.TrimSpace(spec.Type)); t != JobTypeSweep {
		return nil, FieldErrorf("type", "must be sweep for a sweep job, got %q", jobShort(spec.Type))
	}
	common := map[string]json.RawMessage{}
	for _, k := range sortedKeys(obj) {
		switch {
		case sweepCommonKeys[k]:
			common[k] = obj[k]
		case jobUnsupportedKeys[k] != "":
			common[k] = obj[k] // DecodeJobSpec refuses them
		case jobReadOnlyKeys[k]:
		default:
			sub, ok := sweepOwnKeys[k]
			if !ok {
				allowed := schemaKeys(sweepOwnKeys)
				for c := range sweepCommonKeys {
					allowed = append(allowed, c)
				}
				return nil, FieldErrorf(k, "unknown key %q%s in a sweep job; allowed keys: %s (read-only keys of show output are ignored)", k, didYouMean(k, allowed), strings.Join(sortStrings(allowed), ", "))
			}
			if s, ok := sub.(keySchema); ok && nonNull(obj[k]) != nil {
				if err := checkKeys(obj[k], k, s); err != nil {
					return nil, err
				}
			}
		}
	}
	commonDoc, err := json.Marshal(common)
	if err != nil {
		return nil, Errorf(EINVALID, "the job document is not valid (%s)", jsonProblem(err))
	}
	base, err := DecodeJobSpec(commonDoc)
	if err != nil {
		return nil, err
	}
	spec.Name, spec.DisplayName, spec.ExperimentName, spec.Description = base.Name, base.DisplayName, base.ExperimentName, base.Description
	spec.Tags, spec.Compute, spec.Inputs, spec.Outputs, spec.QueueSettings = base.Tags, base.Compute, base.Inputs, base.Outputs, base.QueueSettings

	if spec.Trial, err = decodeSweepTrial(obj["trial"]); err != nil {
		return nil, err
	}
	if spec.SearchSpace, err = decodeSearchSpace(obj["search_space"]); err != nil {
		return nil, err
	}
	if spec.SamplingAlgorithm, err = decodeSamplingAlgorithm(obj["sampling_algorithm"]); err != nil {
		return nil, err
	}
	if spec.Objective, err = decodeObjective(obj["objective"]); err != nil {
		return nil, err
	}
	if spec.Limits, err = decodeSweepLimits(obj["limits"]); err != nil {
		return nil, err
	}
	if spec.EarlyTermination, err = decodeEarlyTermination(obj["early_termination"]); err != nil {
		return nil, err
	}
	return spec, nil
}

func sortStrings(s []string) []string {
	m := make(map[string]bool, len(s))
	for _, v := range s {
		m[v] = true
	}
	return sortedKeys(m)
}

// underField puts an error about a command job's field under prefix
// ("command" becomes "trial.command").
func underField(err error, prefix string) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	if e.Field == "" {
		return &Error{Code: e.Code, Field: prefix, Message: prefix + ": " + e.Message}
	}
	return &Error{Code: e.Code, Field: prefix + "." + e.Field, Message: prefix + "." + e.Message}
}

func decodeSweepTrial(raw json.RawMessage) (*SweepTrial, error) {
	switch jsonKind(raw) {
	case 0, 'n':
		return nil, FieldErrorf("trial", "is required: the command job each trial runs, with ${{search_space.<name>}} in its command")
	case '{':
	default:
		return nil, FieldErrorf("trial", "must be a mapping with command, code, environment, ..., got %s", shortJSON(raw))
	}
	if err := checkKeys(raw, "trial", trialKeys); err != nil {
		return nil, err
	}
	js, err := DecodeJobSpec(raw)
	if err != nil {
		return nil, underField(err, "trial")
	}
	return &SweepTrial{
		Command: js.Command, Code: js.Code, Environment: js.Environment,
		EnvironmentVariables: js.EnvironmentVariables, Resources: js.Resources, Distribution: js.Distribution,
	}, nil
}

func decodeSearchSpace(raw json.RawMessage) (map[string]*SearchParam, error) {
	switch jsonKind(raw) {
	case 0, 'n':
		return nil, FieldErrorf("search_space", "is required: a mapping of hyperparameter names to distributions, e.g. lr: {type: uniform, min_value: 0.001, max_value: 0.1}")
	case '{':
	default:
		return nil, FieldErrorf("search_space", "must be a mapping of hyperparameter names to distributions, got %s", shortJSON(raw))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, FieldErrorf("search_space", "must be a mapping of hyperparameter names to distributions")
	}
	out := make(map[string]*SearchParam, len(m))
	for _, name := range sortedKeys(m) {
		p, err := decodeSearchParam(jobKeyPath("search_space", name), m[name])
		if err != nil {
			return nil, err
		}
		out[name] = p
	}
	return out, nil
}

func decodeSearchParam(field string, raw json.RawMessage) (*SearchParam, error) {
	if jsonKind(raw) != '{' {
		return nil, FieldErrorf(field, "must be a mapping with type and the distribution's parameters, e.g. {type: choice, values: [16, 32]}, got %s", shortJSON(raw))
	}
	if err := checkKeys(raw, field, searchParamKeys); err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, FieldErrorf(field, "must be a mapping")
	}
	p := &SearchParam{}
	var err error
	if p.Type, err = jobString(m["type"], field+".type"); err != nil {
		return nil, err
	}
	if raw := nonNull(m["values"]); raw != nil {
		if p.Values, err = decodeChoiceValues(field+".values", raw); err != nil {
			return nil, err
		}
	}
	if raw := nonNull(m["upper"]); raw != nil {
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
		if raw := nonNull(m[f.key]); raw != nil {
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
	if jsonKind(raw) != '[' {
		return nil, FieldErrorf(field, "must be a list of values, got %s", shortJSON(raw))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, FieldErrorf(field, "must be a list of values")
	}
	out := make([]any, 0, len(items))
	for i, it := range items {
		f := field + "[" + strconv.Itoa(i) + "]"
		switch jsonKind(it) {
		case '{', '[':
			return nil, FieldErrorf(f, "must be a number, string or boolean; nested search spaces are not supported")
		case 'n':
			return nil, FieldErrorf(f, "must be a number, string or boolean, not null")
		}
		var v any
		if err := jobUnmarshalAny(it, &v); err != nil {
			return nil, FieldErrorf(f, "is not valid (%s)", jsonProblem(err))
		}
		out = append(out, v)
	}
	return out, nil
}

// decodeFloat reads a finite number; a string holding one is accepted,
// since YAML 1.1 reads 1e-3 (no dot) as a string.
func decodeFloat(field string, raw json.RawMessage) (float64, error) {
	var s string
	switch k := jsonKind(raw); {
	case isJSONNumberKind(k):
		s = string(bytes.TrimSpace(raw))
	case k == '"':
		if json.Unmarshal(raw, &s) != nil {
			return 0, FieldErrorf(field, "must be a number, got %s", shortJSON(raw))
		}
		s = strings.TrimSpace(s)
	default:
		return 0, FieldErrorf(field, "must be a number, got %s", shortJSON(raw))
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, FieldErrorf(field, "must be a finite number, got %s", shortJSON(raw))
	}
	return f, nil
}

// decodeInt64 reads a whole number that fits 64 bits.
func decodeInt64(field string, raw json.RawMessage) (int64, error) {
	if !isJSONNumberKind(jsonKind(raw)) {
		return 0, FieldErrorf(field, "must be a whole number, got %s", shortJSON(raw))
	}
	s := string(bytes.TrimSpace(raw))
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
		return 0, FieldErrorf(field, "must be a whole number that fits 64 bits, got %s", shortJSON(raw))
	}
	return int64(f), nil
}

// decodeSamplingAlgorithm accepts Azure ML's two spellings: a name
// (sampling_algorithm: random) or a mapping with type, seed and rule.
func decodeSamplingAlgorithm(raw json.RawMessage) (*SamplingAlgorithm, error) {
	switch jsonKind(raw) {
	case 0, 'n':
		return nil, FieldErrorf("sampling_algorithm", "is required: random, grid or bayesian")
	case '"':
		t, err := jobString(raw, "sampling_algorithm")
		if err != nil {
			return nil, err
		}
		return &SamplingAlgorithm{Type: t}, nil
	case '{':
	default:
		return nil, FieldErrorf("sampling_algorithm", "must be random, grid or bayesian, or a mapping with type (and seed, rule for random), got %s", shortJSON(raw))
	}
	if err := checkKeys(raw, "sampling_algorithm", samplingAlgorithmKeys); err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, FieldErrorf("sampling_algorithm", "must be a mapping")
	}
	a := &SamplingAlgorithm{}
	var err error
	if a.Type, err = jobString(m["type"], "sampling_algorithm.type"); err != nil {
		return nil, err
	}
	if a.Rule, err = jobString(m["rule"], "sampling_algorithm.rule"); err != nil {
		return nil, err
	}
	if raw := nonNull(m["seed"]); raw != nil {
		n, err := decodeInt64("sampling_algorithm.seed", raw)
		if err != nil {
			return nil, err
		}
		a.Seed = &n
	}
	return a, nil
}

func decodeObjective(raw json.RawMessage) (*Objective, error) {
	switch jsonKind(raw) {
	case 0, 'n':
		return nil, FieldErrorf("objective", "is required: primary_metric (the metric trials log) and goal (maximize or minimize)")
	case '{':
	default:
		return nil, FieldErrorf("objective", "must be a mapping with primary_metric and goal, got %s", shortJSON(raw))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, FieldErrorf("objective", "must be a mapping")
	}
	o := &Objective{}
	var err error
	if o.PrimaryMetric, err = jobString(m["primary_metric"], "objective.primary_metric"); err != nil {
		return nil, err
	}
	if o.Goal, err = jobString(m["goal"], "objective.goal"); err != nil {
		return nil, err
	}
	return o, nil
}

func decodeSweepLimits(raw json.RawMessage) (*SweepLimits, error) {
	switch jsonKind(raw) {
	case 0, 'n':
		return nil, nil
	case '{':
	default:
		return nil, FieldErrorf("limits", "must be a mapping, got %s", shortJSON(raw))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, FieldErrorf("limits", "must be a mapping")
	}
	l := &SweepLimits{}
	for _, f := range []struct {
		key string
		dst *int
	}{{"max_total_trials", &l.MaxTotalTrials}, {"max_concurrent_trials", &l.MaxConcurrentTrials}} {
		if raw := nonNull(m[f.key]); raw != nil {
			n, err := checkInteger("limits."+f.key, raw)
			if err != nil {
				return nil, err
			}
			if *n < 1 {
				return nil, FieldErrorf("limits."+f.key, "must be 1 or more, got %d", *n)
			}
			*f.dst = *n
		}
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{"timeout", &l.Timeout}, {"trial_timeout", &l.TrialTimeout}} {
		if nonNull(m[f.key]) == nil || len(bytes.TrimSpace(m[f.key])) == 0 {
			continue
		}
		n, err := decodeSeconds(m[f.key])
		if err != nil {
			return nil, FieldErrorf("limits."+f.key, "%s", err.Error())
		}
		if n != nil {
			if *n < 1 {
				return nil, FieldErrorf("limits."+f.key, "must be at least 1 second, got %d", *n)
			}
			*f.dst = *n
		}
	}
	return l, nil
}

func decodeEarlyTermination(raw json.RawMessage) (*EarlyTermination, error) {
	switch jsonKind(raw) {
	case 0, 'n':
		return nil, nil
	case '{':
	default:
		return nil, FieldErrorf("early_termination", "must be a mapping with type (bandit, median_stopping or truncation_selection), got %s", shortJSON(raw))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, FieldErrorf("early_termination", "must be a mapping")
	}
	p := &EarlyTermination{}
	var err error
	if p.Type, err = jobString(m["type"], "early_termination.type"); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{"evaluation_interval", &p.EvaluationInterval}, {"delay_evaluation", &p.DelayEvaluation}, {"truncation_percentage", &p.TruncationPercentage}} {
		if raw := nonNull(m[f.key]); raw != nil {
			n, err := checkInteger("early_termination."+f.key, raw)
			if err != nil {
				return nil, err
			}
			if *n < 0 {
				return nil, FieldErrorf("early_termination."+f.key, "must be 0 or more, got %d", *n)
			}
			*f.dst = *n
		}
	}
	for _, f := range []struct {
		key string
		dst **float64
	}{{"slack_factor", &p.SlackFactor}, {"slack_amount", &p.SlackAmount}} {
		if raw := nonNull(m[f.key]); raw != nil {
			v, err := decodeFloat("early_termination."+f.key, raw)
			if err != nil {
				return nil, err
			}
			*f.dst = &v
		}
	}
	return p, nil
}
