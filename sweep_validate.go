package shoal

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxExpArg bounds the values exp() is applied to (loguniform bounds,
// lognormal mu) so that a sample stays a finite float64.
const maxExpArg = 700

// NormalizeSweepSpec applies defaults to a sweep spec, puts enumerations
// in their canonical spelling and checks every rule that does not need
// the store. The trial and the keys a sweep shares with a command job
// are checked by NormalizeJobSpec (an error about the trial names its
// path under trial); every ${{search_space.x}} in trial.command must
// name a hyperparameter. Azure ML's rules on algorithms are kept: grid
// sampling takes only choice parameters; bayesian sampling takes only
// choice, uniform and quniform, and no early termination policy.
func NormalizeSweepSpec(spec *SweepSpec) error {
	if spec == nil {
		return Errorf(EINVALID, "the job document is empty")
	}
	if t := strings.ToLower(strings.TrimSpace(spec.Type)); t != JobTypeSweep {
		return FieldErrorf("type", "must be sweep for a sweep job, got %q", jobShort(spec.Type))
	}
	spec.Type = JobTypeSweep
	if spec.Trial == nil {
		return FieldErrorf("trial", "is required: the command job each trial runs, with ${{search_space.<name>}} in its command")
	}
	if err := normalizeSearchSpace(spec.SearchSpace); err != nil {
		return err
	}
	if strings.TrimSpace(spec.Trial.Command) == "" {
		return FieldErrorf("trial.command", "is required: the shell command each trial runs, e.g. python train.py --lr ${{search_space.lr}}")
	}
	// The trial command with every hyperparameter replaced by a stand-in:
	// what is left must be a valid command job's command.
	stand := make(map[string]string, len(spec.SearchSpace))
	for name := range spec.SearchSpace {
		stand[name] = "0"
	}
	command, err := SubstituteSearchSpace(spec.Trial.Command, stand)
	if err != nil {
		return err
	}
	js := trialJob(spec, command)
	if err := NormalizeJobSpec(js); err != nil {
		return sweepJobError(err)
	}
	spec.Compute, spec.Tags, spec.QueueSettings = js.Compute, js.Tags, js.QueueSettings
	spec.Trial.Environment, spec.Trial.Resources, spec.Trial.Distribution = js.Environment, js.Resources, js.Distribution

	if err := normalizeSamplingAlgorithm(spec); err != nil {
		return err
	}
	if err := normalizeObjective(spec.Objective); err != nil {
		return err
	}
	if spec.Limits == nil {
		spec.Limits = &SweepLimits{}
	}
	if err := normalizeSweepLimits(spec.Limits); err != nil {
		return err
	}
	return normalizeEarlyTermination(spec)
}

// trialJob returns the command job a trial runs with command as its
// command: the trial's fields and the sweep's compute, inputs, outputs,
// queue settings and names.
func trialJob(spec *SweepSpec, command string) *JobSpec {
	t := spec.Trial
	return &JobSpec{
		Name: spec.Name, Type: JobTypeCommand, DisplayName: spec.DisplayName, ExperimentName: spec.ExperimentName,
		Description: spec.Description, Tags: spec.Tags, Command: command, Code: t.Code, Environment: t.Environment,
		EnvironmentVariables: t.EnvironmentVariables, Compute: spec.Compute, Inputs: spec.Inputs, Outputs: spec.Outputs,
		Resources: t.Resources, Distribution: t.Distribution, QueueSettings: spec.QueueSettings,
	}
}

// TrialJobSpec returns the command job of one trial: the trial with
// values (a hyperparameter's name to its text) substituted for
// ${{search_space.x}} in its command, and the sweep's compute, inputs,
// outputs, experiment and queue settings. Name and display name are
// left for the caller, which names each child job. The spec must have
// been normalised; the result shares no maps with it.
func TrialJobSpec(spec *SweepSpec, values map[string]string) (*JobSpec, error) {
	if spec.Trial == nil {
		return nil, FieldErrorf("trial", "is required")
	}
	command, err := SubstituteSearchSpace(spec.Trial.Command, values)
	if err != nil {
		return nil, err
	}
	js := trialJob(spec, command)
	js.Name, js.DisplayName = "", ""
	js.Tags = copyStrings(js.Tags)
	js.EnvironmentVariables = copyStrings(js.EnvironmentVariables)
	if js.Inputs != nil {
		in := make(map[string]*JobInput, len(js.Inputs))
		for k, v := range js.Inputs {
			c := *v
			in[k] = &c
		}
		js.Inputs = in
	}
	if js.Outputs != nil {
		out := make(map[string]*JobOutput, len(js.Outputs))
		for k, v := range js.Outputs {
			c := *v
			out[k] = &c
		}
		js.Outputs = out
	}
	if r := js.Resources; r != nil {
		c := *r
		js.Resources = &c
	}
	if d := js.Distribution; d != nil {
		c := *d
		js.Distribution = &c
	}
	if q := js.QueueSettings; q != nil {
		c := *q
		js.QueueSettings = &c
	}
	return js, nil
}

func copyStrings(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// sweepJobError names a command job's error by its path in a sweep job:
// the fields of the trial move under trial, the sweep's own stay.
func sweepJobError(err error) error {
	f := ErrorField(err)
	head, _, _ := strings.Cut(f, ".")
	if _, ok := trialKeys[head]; ok {
		var e *Error
		if errors.As(err, &e) {
			return &Error{Code: e.Code, Field: "trial." + e.Field, Message: "trial." + e.Message}
		}
	}
	return err
}

// SubstituteSearchSpace replaces every ${{search_space.x}} in command
// (spaces inside the braces allowed) with values[x], verbatim, and
// leaves every other ${{...}} reference as it is, for the trial's
// command job to expand. A reference to a name values lacks is an
// EINVALID error on trial.command.
func SubstituteSearchSpace(command string, values map[string]string) (string, error) {
	if strings.ContainsRune(command, 0) {
		return "", FieldErrorf("trial.command", "must not contain NUL characters")
	}
	locs := jobRefRE.FindAllStringSubmatchIndex(command, -1)
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		ref := command[loc[0]:loc[1]]
		expr := strings.TrimSpace(command[loc[2]:loc[3]])
		ns, name, _ := strings.Cut(expr, ".")
		if strings.TrimSpace(ns) != "search_space" {
			continue
		}
		name = strings.TrimSpace(name)
		v, ok := values[name]
		if !ok {
			return "", FieldErrorf("trial.command", "%s refers to hyperparameter %q, which is not declared under search_space (declared: %s)", jobShort(ref), jobShort(name), strings.Join(sortedKeys(values), ", "))
		}
		b.WriteString(command[last:loc[0]])
		b.WriteString(v)
		last = loc[1]
	}
	b.WriteString(command[last:])
	return b.String(), nil
}

var searchDistributions = []string{DistChoice, DistRandint, DistUniform, DistLogUniform, DistNormal, DistLogNormal,
	DistQUniform, DistQLogUniform, DistQNormal, DistQLogNormal}

// searchParamFields says which parameters each distribution takes.
var searchParamFields = map[string][]string{
	DistChoice:      {"values"},
	DistRandint:     {"upper"},
	DistUniform:     {"min_value", "max_value"},
	DistLogUniform:  {"min_value", "max_value"},
	DistNormal:      {"mu", "sigma"},
	DistLogNormal:   {"mu", "sigma"},
	DistQUniform:    {"min_value", "max_value", "q"},
	DistQLogUniform: {"min_value", "max_value", "q"},
	DistQNormal:     {"mu", "sigma", "q"},
	DistQLogNormal:  {"mu", "sigma", "q"},
}

func normalizeSearchSpace(space map[string]*SearchParam) error {
	if len(space) == 0 {
		return FieldErrorf("search_space", "is required: at least one hyperparameter, e.g. lr: {type: uniform, min_value: 0.001, max_value: 0.1}")
	}
	if len(space) > MaxSearchSpaceParams {
		return FieldErrorf("search_space", "has %d hyperparameters; at most %d are allowed", len(space), MaxSearchSpaceParams)
	}
	for _, name := range sortedKeys(space) {
		field := jobKeyPath("search_space", name)
		if len(name) > maxSearchParamNameLen || !jobIONameRE.MatchString(name) {
			return FieldErrorf(field, "hyperparameter name %q must be 1 to %d letters, digits and '_', starting with a letter or '_'", jobShort(name), maxSearchParamNameLen)
		}
		if err := normalizeSearchParam(field, space[name]); err != nil {
			return err
		}
	}
	return nil
}

func normalizeSearchParam(field string, p *SearchParam) error {
	if p == nil {
		return FieldErrorf(field, "must be a mapping with type and the distribution's parameters")
	}
	t := strings.ToLower(strings.TrimSpace(p.Type))
	want, ok := searchParamFields[t]
	if !ok {
		if t == "" {
			return FieldErrorf(field+".type", "is required: one of %s", strings.Join(searchDistributions, ", "))
		}
		return FieldErrorf(field+".type", "unknown distribution %q; use one of %s", jobShort(p.Type), strings.Join(searchDistributions, ", "))
	}
	p.Type = t
	present := map[string]bool{
		"values": p.Values != nil, "upper": p.Upper != nil, "min_value": p.MinValue != nil,
		"max_value": p.MaxValue != nil, "mu": p.Mu != nil, "sigma": p.Sigma != nil, "q": p.Q != nil,
	}
	for _, k := range []string{"values", "upper", "min_value", "max_value", "mu", "sigma", "q"} {
		if present[k] && !jobContains(want, k) {
			return FieldErrorf(field+"."+k, "does not apply to a %s distribution, which takes %s", t, strings.Join(want, ", "))
		}
	}
	for _, k := range want {
		if !present[k] {
			return FieldErrorf(field+"."+k, "is required for a %s distribution", t)
		}
	}
	switch t {
	case DistChoice:
		if len(p.Values) == 0 {
			return FieldErrorf(field+".values", "must list at least one value")
		}
		if len(p.Values) > MaxChoiceValues {
			return FieldErrorf(field+".values", "has %d values; at most %d are allowed", len(p.Values), MaxChoiceValues)
		}
		for i, v := range p.Values {
			f := field + ".values[" + strconv.Itoa(i) + "]"
			if _, isBool := v.(bool); isBool {
				continue
			}
			c, err := convertJobLiteral(f, "", v)
			if err != nil {
				return err
			}
			if s, ok := c.(string); ok && strings.ContainsFunc(s, IsUnprintable) {
				return FieldErrorf(f, "must not contain control characters")
			}
		}
	case DistRandint:
		if *p.Upper < 1 {
			return FieldErrorf(field+".upper", "must be 1 or more (values are drawn from 0 to upper-1), got %d", *p.Upper)
		}
	case DistUniform, DistLogUniform, DistQUniform, DistQLogUniform:
		if !(*p.MinValue < *p.MaxValue) {
			return FieldErrorf(field+".min_value", "must be less than max_value (%s), got %s", FormatInputValue(*p.MaxValue), FormatInputValue(*p.MinValue))
		}
		if (t == DistLogUniform || t == DistQLogUniform) && (*p.MaxValue > maxExpArg || *p.MinValue < -maxExpArg) {
			return FieldErrorf(field+".max_value", "a %s distribution's bounds are logarithms (values are exp(uniform(min_value, max_value))) and must lie between -%d and %d", t, maxExpArg, maxExpArg)
		}
	default: // normal, lognormal and their q variants
		if !(*p.Sigma > 0) {
			return FieldErrorf(field+".sigma", "must be greater than 0, got %s", FormatInputValue(*p.Sigma))
		}
		if (t == DistLogNormal || t == DistQLogNormal) && math.Abs(*p.Mu) > maxExpArg {
			return FieldErrorf(field+".mu", "a %s distribution's mu is a logarithm and must lie between -%d and %d", t, maxExpArg, maxExpArg)
		}
	}
	if p.Q != nil && !(*p.Q > 0) {
		return FieldErrorf(field+".q", "must be greater than 0, got %s", FormatInputValue(*p.Q))
	}
	return nil
}

func normalizeSamplingAlgorithm(spec *SweepSpec) error {
	a := spec.SamplingAlgorithm
	if a == nil {
		return FieldErrorf("sampling_algorithm", "is required: random, grid or bayesian")
	}
	t := strings.ToLower(strings.TrimSpace(a.Type))
	switch t {
	case SamplingRandom, SamplingGrid, SamplingBayesian:
	case "":
		return FieldErrorf("sampling_algorithm.type", "is required: random, grid or bayesian")
	default:
		return FieldErrorf("sampling_algorithm", "unknown sampling algorithm %q; use random, grid or bayesian", jobShort(a.Type))
	}
	a.Type = t
	rule := strings.ToLower(strings.TrimSpace(a.Rule))
	if t != SamplingRandom {
		if rule != "" {
			return FieldErrorf("sampling_algorithm.rule", "applies to random sampling only")
		}
		if a.Seed != nil {
			return FieldErrorf("sampling_algorithm.seed", "applies to random sampling only")
		}
	}
	switch rule {
	case "", RandomRuleRandom:
		if t == SamplingRandom {
			rule = RandomRuleRandom
		}
	case RandomRuleSobol:
		return FieldErrorf("sampling_algorithm.rule", "sobol is not supported; use rule: random (with a seed, the trials are reproducible)")
	default:
		return FieldErrorf("sampling_algorithm.rule", "unknown rule %q; use random", jobShort(a.Rule))
	}
	a.Rule = rule
	names := sortedKeys(spec.SearchSpace)
	switch t {
	case SamplingGrid:
		combos := 1
		for _, n := range names {
			p := spec.SearchSpace[n]
			if p.Type != DistChoice {
				return FieldErrorf(jobKeyPath("search_space", n)+".type", "grid sampling takes only choice hyperparameters (as Azure ML), and %s is %s", jobShort(n), p.Type)
			}
			if combos > MaxGridCombinations/len(p.Values) {
				return FieldErrorf("search_space", "grid sampling would try more than %d combinations; use random or bayesian sampling", MaxGridCombinations)
			}
			combos *= len(p.Values)
		}
	case SamplingBayesian:
		for _, n := range names {
			switch p := spec.SearchSpace[n]; p.Type {
			case DistChoice, DistUniform, DistQUniform:
			default:
				return FieldErrorf(jobKeyPath("search_space", n)+".type", "bayesian sampling takes only choice, uniform and quniform hyperparameters (as Azure ML), and %s is %s", jobShort(n), p.Type)
			}
		}
	}
	return nil
}

func normalizeObjective(o *Objective) error {
	if o == nil {
		return FieldErrorf("objective", "is required: primary_metric (the metric trials log) and goal (maximize or minimize)")
	}
	o.PrimaryMetric = strings.TrimSpace(o.PrimaryMetric)
	switch m := o.PrimaryMetric; {
	case m == "":
		return FieldErrorf("objective.primary_metric", "is required: the name of the metric each trial logs with mlflow.log_metric")
	case utf8.RuneCountInString(m) > MaxJobNameLength:
		return FieldErrorf("objective.primary_metric", "must be at most %d characters long", MaxJobNameLength)
	case strings.ContainsFunc(m, IsUnprintable):
		return FieldErrorf("objective.primary_metric", "must not contain control characters")
	}
	g := strings.ToLower(strings.TrimSpace(o.Goal))
	switch g {
	case GoalMaximize, GoalMinimize:
	case "":
		return FieldErrorf("objective.goal", "is required: maximize or minimize")
	default:
		return FieldErrorf("objective.goal", "unknown goal %q; use maximize or minimize", jobShort(o.Goal))
	}
	o.Goal = g
	return nil
}

func normalizeSweepLimits(l *SweepLimits) error {
	switch {
	case l.MaxTotalTrials == 0:
		l.MaxTotalTrials = DefaultSweepMaxTrials
	case l.MaxTotalTrials < 0 || l.MaxTotalTrials > MaxSweepTrials:
		return FieldErrorf("limits.max_total_trials", "must be between 1 and %d, got %d", MaxSweepTrials, l.MaxTotalTrials)
	}
	switch {
	case l.MaxConcurrentTrials == 0:
		l.MaxConcurrentTrials = l.MaxTotalTrials
	case l.MaxConcurrentTrials < 0 || l.MaxConcurrentTrials > MaxSweepTrials:
		return FieldErrorf("limits.max_concurrent_trials", "must be between 1 and %d, got %d", MaxSweepTrials, l.MaxConcurrentTrials)
	case l.MaxConcurrentTrials > l.MaxTotalTrials:
		// More at once than in all is the same as all at once.
		l.MaxConcurrentTrials = l.MaxTotalTrials
	}
	if l.Timeout < 0 || l.Timeout > maxSeconds {
		return FieldErrorf("limits.timeout", "must be between 1 and %d seconds, got %d", int(maxSeconds), l.Timeout)
	}
	if l.TrialTimeout < 0 || l.TrialTimeout > maxSeconds {
		return FieldErrorf("limits.trial_timeout", "must be between 1 and %d seconds, got %d", int(maxSeconds), l.TrialTimeout)
	}
	return nil
}

func normalizeEarlyTermination(spec *SweepSpec) error {
	p := spec.EarlyTermination
	if p == nil {
		return nil
	}
	if spec.SamplingAlgorithm.Type == SamplingBayesian {
		return FieldErrorf("early_termination", "bayesian sampling does not support early termination (as Azure ML): remove early_termination or use random sampling")
	}
	t := strings.ToLower(strings.TrimSpace(p.Type))
	switch t {
	case PolicyBandit, PolicyMedianStopping, PolicyTruncationSelection:
	case "":
		return FieldErrorf("early_termination.type", "is required: bandit, median_stopping or truncation_selection")
	default:
		return FieldErrorf("early_termination.type", "unknown policy %q; use bandit, median_stopping or truncation_selection", jobShort(p.Type))
	}
	p.Type = t
	switch {
	case p.EvaluationInterval < 0 || p.EvaluationInterval > maxEvaluationIntervals:
		return FieldErrorf("early_termination.evaluation_interval", "must be between 1 and %d, got %d", maxEvaluationIntervals, p.EvaluationInterval)
	case p.EvaluationInterval == 0:
		// Azure ML's SDK v2 writes 0 for "unset"; every logged value is an interval.
		p.EvaluationInterval = 1
	}
	if p.DelayEvaluation < 0 || p.DelayEvaluation > maxEvaluationIntervals {
		return FieldErrorf("early_termination.delay_evaluation", "must be between 0 and %d, got %d", maxEvaluationIntervals, p.DelayEvaluation)
	}
	if t != PolicyBandit {
		if p.SlackFactor != nil {
			return FieldErrorf("early_termination.slack_factor", "applies to the bandit policy only")
		}
		if p.SlackAmount != nil {
			return FieldErrorf("early_termination.slack_amount", "applies to the bandit policy only")
		}
	}
	if t != PolicyTruncationSelection && p.TruncationPercentage != 0 {
		return FieldErrorf("early_termination.truncation_percentage", "applies to the truncation_selection policy only")
	}
	switch t {
	case PolicyBandit:
		switch {
		case p.SlackFactor == nil && p.SlackAmount == nil:
			return FieldErrorf("early_termination.slack_factor", "the bandit policy needs slack_factor (a ratio) or slack_amount (an absolute distance) from the best trial")
		case p.SlackFactor != nil && p.SlackAmount != nil:
			return FieldErrorf("early_termination.slack_amount", "give slack_factor or slack_amount, not both")
		case p.SlackFactor != nil && !(*p.SlackFactor > 0):
			return FieldErrorf("early_termination.slack_factor", "must be greater than 0, got %s", FormatInputValue(*p.SlackFactor))
		case p.SlackAmount != nil && !(*p.SlackAmount > 0):
			return FieldErrorf("early_termination.slack_amount", "must be greater than 0, got %s", FormatInputValue(*p.SlackAmount))
		}
	case PolicyTruncationSelection:
		if p.TruncationPercentage < minTruncationPercent || p.TruncationPercentage > maxTruncationPercent {
			return FieldErrorf("early_termination.truncation_percentage", "must be between %d and %d (the percentage of the worst trials to cancel at each evaluation), got %d", minTruncationPercent, maxTruncationPercent, p.TruncationPercentage)
		}
	}
	return nil
}
