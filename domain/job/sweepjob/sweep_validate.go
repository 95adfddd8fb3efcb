package sweepjob

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
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
func NormalizeSweepSpec(spec *job.SweepSpec) error {
	if spec == nil {
		return core.Errorf(core.EINVALID, "the job document is empty")
	}
	if t := strings.ToLower(strings.TrimSpace(spec.Type)); t != job.JobTypeSweep {
		return core.FieldErrorf("type", "must be sweep for a sweep job, got %q", core.Short(spec.Type))
	}
	spec.Type = job.JobTypeSweep
	if spec.Trial == nil {
		return core.FieldErrorf("trial", "is required: the command job each trial runs, with ${{search_space.<name>}} in its command")
	}
	if err := normalizeSearchSpace(spec.SearchSpace); err != nil {
		return err
	}
	if strings.TrimSpace(spec.Trial.Command) == "" {
		return core.FieldErrorf("trial.command", "is required: the shell command each trial runs, e.g. python train.py --lr ${{search_space.lr}}")
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
	if err := job.NormalizeJobSpec(js); err != nil {
		return sweepJobError(err)
	}
	spec.Compute, spec.Tags, spec.QueueSettings, spec.Identity = js.Compute, js.Tags, js.QueueSettings, js.Identity
	spec.Trial.Environment, spec.Trial.Resources, spec.Trial.Distribution = js.Environment, js.Resources, js.Distribution

	if err := normalizeSamplingAlgorithm(spec); err != nil {
		return err
	}
	if err := normalizeObjective(spec.Objective); err != nil {
		return err
	}
	if spec.Limits == nil {
		spec.Limits = &job.SweepLimits{}
	}
	if err := normalizeSweepLimits(spec.Limits); err != nil {
		return err
	}
	return normalizeEarlyTermination(spec)
}

// trialJob returns the command job a trial runs with command as its
// command: the trial's fields and the sweep's compute, inputs, outputs,
// queue settings and names.
func trialJob(spec *job.SweepSpec, command string) *job.JobSpec {
	t := spec.Trial
	return &job.JobSpec{
		Name: spec.Name, Type: job.JobTypeCommand, DisplayName: spec.DisplayName, ExperimentName: spec.ExperimentName,
		Description: spec.Description, Tags: spec.Tags, Command: command, Code: t.Code, CodeAsset: t.CodeAsset, Environment: t.Environment,
		EnvironmentVariables: t.EnvironmentVariables, Compute: spec.Compute, Inputs: spec.Inputs, Outputs: spec.Outputs,
		Resources: t.Resources, Distribution: t.Distribution, QueueSettings: spec.QueueSettings, Identity: spec.Identity,
	}
}

// TrialJobSpec returns the command job of one trial: the trial with
// values (a hyperparameter's name to its text) substituted for
// ${{search_space.x}} in its command, and the sweep's compute, inputs,
// outputs, experiment and queue settings. Name and display name are
// left for the caller, which names each child job. The spec must have
// been normalised; the result shares no maps with it.
func TrialJobSpec(spec *job.SweepSpec, values map[string]string) (*job.JobSpec, error) {
	if spec.Trial == nil {
		return nil, core.FieldErrorf("trial", "is required")
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
		in := make(map[string]*job.JobInput, len(js.Inputs))
		for k, v := range js.Inputs {
			c := *v
			in[k] = &c
		}
		js.Inputs = in
	}
	if js.Outputs != nil {
		out := make(map[string]*job.JobOutput, len(js.Outputs))
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
	f := core.ErrorField(err)
	head, _, _ := strings.Cut(f, ".")
	if _, ok := trialKeys[head]; ok {
		var e *core.Error
		if errors.As(err, &e) {
			return &core.Error{Code: e.Code, Field: "trial." + e.Field, Message: "trial." + e.Message}
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
		return "", core.FieldErrorf("trial.command", "must not contain NUL characters")
	}
	locs := job.JobRefRE.FindAllStringSubmatchIndex(command, -1)
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
			return "", core.FieldErrorf("trial.command", "%s refers to hyperparameter %q, which is not declared under search_space (declared: %s)", core.Short(ref), core.Short(name), strings.Join(core.SortedKeys(values), ", "))
		}
		b.WriteString(command[last:loc[0]])
		b.WriteString(v)
		last = loc[1]
	}
	b.WriteString(command[last:])
	return b.String(), nil
}

var searchDistributions = []string{job.DistChoice, job.DistRandint, job.DistUniform, job.DistLogUniform, job.DistNormal, job.DistLogNormal,
	job.DistQUniform, job.DistQLogUniform, job.DistQNormal, job.DistQLogNormal}

// searchParamFields says which parameters each distribution takes.
var searchParamFields = map[string][]string{
	job.DistChoice:      {"values"},
	job.DistRandint:     {"upper"},
	job.DistUniform:     {"min_value", "max_value"},
	job.DistLogUniform:  {"min_value", "max_value"},
	job.DistNormal:      {"mu", "sigma"},
	job.DistLogNormal:   {"mu", "sigma"},
	job.DistQUniform:    {"min_value", "max_value", "q"},
	job.DistQLogUniform: {"min_value", "max_value", "q"},
	job.DistQNormal:     {"mu", "sigma", "q"},
	job.DistQLogNormal:  {"mu", "sigma", "q"},
}

func normalizeSearchSpace(space map[string]*job.SearchParam) error {
	if len(space) == 0 {
		return core.FieldErrorf("search_space", "is required: at least one hyperparameter, e.g. lr: {type: uniform, min_value: 0.001, max_value: 0.1}")
	}
	if len(space) > job.MaxSearchSpaceParams {
		return core.FieldErrorf("search_space", "has %d hyperparameters; at most %d are allowed", len(space), job.MaxSearchSpaceParams)
	}
	for _, name := range core.SortedKeys(space) {
		field := job.JobKeyPath("search_space", name)
		if len(name) > job.MaxSearchParamNameLen || !job.JobIONameRE.MatchString(name) {
			return core.FieldErrorf(field, "hyperparameter name %q must be 1 to %d letters, digits and '_', starting with a letter or '_'", core.Short(name), job.MaxSearchParamNameLen)
		}
		if err := normalizeSearchParam(field, space[name]); err != nil {
			return err
		}
	}
	return nil
}

func normalizeSearchParam(field string, p *job.SearchParam) error {
	if p == nil {
		return core.FieldErrorf(field, "must be a mapping with type and the distribution's parameters")
	}
	t := strings.ToLower(strings.TrimSpace(p.Type))
	want, ok := searchParamFields[t]
	if !ok {
		if t == "" {
			return core.FieldErrorf(field+".type", "is required: one of %s", strings.Join(searchDistributions, ", "))
		}
		return core.FieldErrorf(field+".type", "unknown distribution %q; use one of %s", core.Short(p.Type), strings.Join(searchDistributions, ", "))
	}
	p.Type = t
	present := map[string]bool{
		"values": p.Values != nil, "upper": p.Upper != nil, "min_value": p.MinValue != nil,
		"max_value": p.MaxValue != nil, "mu": p.Mu != nil, "sigma": p.Sigma != nil, "q": p.Q != nil,
	}
	for _, k := range []string{"values", "upper", "min_value", "max_value", "mu", "sigma", "q"} {
		if present[k] && !job.JobContains(want, k) {
			return core.FieldErrorf(field+"."+k, "does not apply to a %s distribution, which takes %s", t, strings.Join(want, ", "))
		}
	}
	for _, k := range want {
		if !present[k] {
			return core.FieldErrorf(field+"."+k, "is required for a %s distribution", t)
		}
	}
	switch t {
	case job.DistChoice:
		if len(p.Values) == 0 {
			return core.FieldErrorf(field+".values", "must list at least one value")
		}
		if len(p.Values) > job.MaxChoiceValues {
			return core.FieldErrorf(field+".values", "has %d values; at most %d are allowed", len(p.Values), job.MaxChoiceValues)
		}
		for i, v := range p.Values {
			f := field + ".values[" + strconv.Itoa(i) + "]"
			if _, isBool := v.(bool); isBool {
				continue
			}
			c, err := job.ConvertJobLiteral(f, "", v)
			if err != nil {
				return err
			}
			if s, ok := c.(string); ok && strings.ContainsFunc(s, core.IsUnprintable) {
				return core.FieldErrorf(f, "must not contain control characters")
			}
		}
	case job.DistRandint:
		if *p.Upper < 1 {
			return core.FieldErrorf(field+".upper", "must be 1 or more (values are drawn from 0 to upper-1), got %d", *p.Upper)
		}
	case job.DistUniform, job.DistLogUniform, job.DistQUniform, job.DistQLogUniform:
		if !(*p.MinValue < *p.MaxValue) {
			return core.FieldErrorf(field+".min_value", "must be less than max_value (%s), got %s", job.FormatInputValue(*p.MaxValue), job.FormatInputValue(*p.MinValue))
		}
		if (t == job.DistLogUniform || t == job.DistQLogUniform) && (*p.MaxValue > maxExpArg || *p.MinValue < -maxExpArg) {
			return core.FieldErrorf(field+".max_value", "a %s distribution's bounds are logarithms (values are exp(uniform(min_value, max_value))) and must lie between -%d and %d", t, maxExpArg, maxExpArg)
		}
	default: // normal, lognormal and their q variants
		if !(*p.Sigma > 0) {
			return core.FieldErrorf(field+".sigma", "must be greater than 0, got %s", job.FormatInputValue(*p.Sigma))
		}
		if (t == job.DistLogNormal || t == job.DistQLogNormal) && math.Abs(*p.Mu) > maxExpArg {
			return core.FieldErrorf(field+".mu", "a %s distribution's mu is a logarithm and must lie between -%d and %d", t, maxExpArg, maxExpArg)
		}
	}
	if p.Q != nil && !(*p.Q > 0) {
		return core.FieldErrorf(field+".q", "must be greater than 0, got %s", job.FormatInputValue(*p.Q))
	}
	return nil
}

func normalizeSamplingAlgorithm(spec *job.SweepSpec) error {
	a := spec.SamplingAlgorithm
	if a == nil {
		return core.FieldErrorf("sampling_algorithm", "is required: random, grid or bayesian")
	}
	t := strings.ToLower(strings.TrimSpace(a.Type))
	switch t {
	case job.SamplingRandom, job.SamplingGrid, job.SamplingBayesian:
	case "":
		return core.FieldErrorf("sampling_algorithm.type", "is required: random, grid or bayesian")
	default:
		return core.FieldErrorf("sampling_algorithm", "unknown sampling algorithm %q; use random, grid or bayesian", core.Short(a.Type))
	}
	a.Type = t
	rule := strings.ToLower(strings.TrimSpace(a.Rule))
	if t != job.SamplingRandom {
		if rule != "" {
			return core.FieldErrorf("sampling_algorithm.rule", "applies to random sampling only")
		}
		if a.Seed != nil {
			return core.FieldErrorf("sampling_algorithm.seed", "applies to random sampling only")
		}
	}
	switch rule {
	case "", job.RandomRuleRandom:
		if t == job.SamplingRandom {
			rule = job.RandomRuleRandom
		}
	case job.RandomRuleSobol:
		return core.FieldErrorf("sampling_algorithm.rule", "sobol is not supported; use rule: random (with a seed, the trials are reproducible)")
	default:
		return core.FieldErrorf("sampling_algorithm.rule", "unknown rule %q; use random", core.Short(a.Rule))
	}
	a.Rule = rule
	names := core.SortedKeys(spec.SearchSpace)
	switch t {
	case job.SamplingGrid:
		combos := 1
		for _, n := range names {
			p := spec.SearchSpace[n]
			if p.Type != job.DistChoice {
				return core.FieldErrorf(job.JobKeyPath("search_space", n)+".type", "grid sampling takes only choice hyperparameters (as Azure ML), and %s is %s", core.Short(n), p.Type)
			}
			if combos > job.MaxGridCombinations/len(p.Values) {
				return core.FieldErrorf("search_space", "grid sampling would try more than %d combinations; use random or bayesian sampling", job.MaxGridCombinations)
			}
			combos *= len(p.Values)
		}
	case job.SamplingBayesian:
		for _, n := range names {
			switch p := spec.SearchSpace[n]; p.Type {
			case job.DistChoice, job.DistUniform, job.DistQUniform:
			default:
				return core.FieldErrorf(job.JobKeyPath("search_space", n)+".type", "bayesian sampling takes only choice, uniform and quniform hyperparameters (as Azure ML), and %s is %s", core.Short(n), p.Type)
			}
		}
	}
	return nil
}

func normalizeObjective(o *job.Objective) error {
	if o == nil {
		return core.FieldErrorf("objective", "is required: primary_metric (the metric trials log) and goal (maximize or minimize)")
	}
	o.PrimaryMetric = strings.TrimSpace(o.PrimaryMetric)
	switch m := o.PrimaryMetric; {
	case m == "":
		return core.FieldErrorf("objective.primary_metric", "is required: the name of the metric each trial logs with mlflow.log_metric")
	case utf8.RuneCountInString(m) > job.MaxJobNameLength:
		return core.FieldErrorf("objective.primary_metric", "must be at most %d characters long", job.MaxJobNameLength)
	case strings.ContainsFunc(m, core.IsUnprintable):
		return core.FieldErrorf("objective.primary_metric", "must not contain control characters")
	}
	g := strings.ToLower(strings.TrimSpace(o.Goal))
	switch g {
	case job.GoalMaximize, job.GoalMinimize:
	case "":
		return core.FieldErrorf("objective.goal", "is required: maximize or minimize")
	default:
		return core.FieldErrorf("objective.goal", "unknown goal %q; use maximize or minimize", core.Short(o.Goal))
	}
	o.Goal = g
	return nil
}

func normalizeSweepLimits(l *job.SweepLimits) error {
	switch {
	case l.MaxTotalTrials == 0:
		l.MaxTotalTrials = job.DefaultSweepMaxTrials
	case l.MaxTotalTrials < 0 || l.MaxTotalTrials > job.MaxSweepTrials:
		return core.FieldErrorf("limits.max_total_trials", "must be between 1 and %d, got %d", job.MaxSweepTrials, l.MaxTotalTrials)
	}
	switch {
	case l.MaxConcurrentTrials == 0:
		l.MaxConcurrentTrials = l.MaxTotalTrials
	case l.MaxConcurrentTrials < 0 || l.MaxConcurrentTrials > job.MaxSweepTrials:
		return core.FieldErrorf("limits.max_concurrent_trials", "must be between 1 and %d, got %d", job.MaxSweepTrials, l.MaxConcurrentTrials)
	case l.MaxConcurrentTrials > l.MaxTotalTrials:
		// More at once than in all is the same as all at once.
		l.MaxConcurrentTrials = l.MaxTotalTrials
	}
	if l.Timeout < 0 || l.Timeout > compute.MaxSeconds {
		return core.FieldErrorf("limits.timeout", "must be between 1 and %d seconds, got %d", int(compute.MaxSeconds), l.Timeout)
	}
	if l.TrialTimeout < 0 || l.TrialTimeout > compute.MaxSeconds {
		return core.FieldErrorf("limits.trial_timeout", "must be between 1 and %d seconds, got %d", int(compute.MaxSeconds), l.TrialTimeout)
	}
	return nil
}

func normalizeEarlyTermination(spec *job.SweepSpec) error {
	p := spec.EarlyTermination
	if p == nil {
		return nil
	}
	if spec.SamplingAlgorithm.Type == job.SamplingBayesian {
		return core.FieldErrorf("early_termination", "bayesian sampling does not support early termination (as Azure ML): remove early_termination or use random sampling")
	}
	t := strings.ToLower(strings.TrimSpace(p.Type))
	switch t {
	case job.PolicyBandit, job.PolicyMedianStopping, job.PolicyTruncationSelection:
	case "":
		return core.FieldErrorf("early_termination.type", "is required: bandit, median_stopping or truncation_selection")
	default:
		return core.FieldErrorf("early_termination.type", "unknown policy %q; use bandit, median_stopping or truncation_selection", core.Short(p.Type))
	}
	p.Type = t
	switch {
	case p.EvaluationInterval < 0 || p.EvaluationInterval > job.MaxEvaluationIntervals:
		return core.FieldErrorf("early_termination.evaluation_interval", "must be between 1 and %d, got %d", job.MaxEvaluationIntervals, p.EvaluationInterval)
	case p.EvaluationInterval == 0:
		// Azure ML's SDK v2 writes 0 for "unset"; every logged value is an interval.
		p.EvaluationInterval = 1
	}
	if p.DelayEvaluation < 0 || p.DelayEvaluation > job.MaxEvaluationIntervals {
		return core.FieldErrorf("early_termination.delay_evaluation", "must be between 0 and %d, got %d", job.MaxEvaluationIntervals, p.DelayEvaluation)
	}
	if t != job.PolicyBandit {
		if p.SlackFactor != nil {
			return core.FieldErrorf("early_termination.slack_factor", "applies to the bandit policy only")
		}
		if p.SlackAmount != nil {
			return core.FieldErrorf("early_termination.slack_amount", "applies to the bandit policy only")
		}
	}
	if t != job.PolicyTruncationSelection && p.TruncationPercentage != 0 {
		return core.FieldErrorf("early_termination.truncation_percentage", "applies to the truncation_selection policy only")
	}
	switch t {
	case job.PolicyBandit:
		switch {
		case p.SlackFactor == nil && p.SlackAmount == nil:
			return core.FieldErrorf("early_termination.slack_factor", "the bandit policy needs slack_factor (a ratio) or slack_amount (an absolute distance) from the best trial")
		case p.SlackFactor != nil && p.SlackAmount != nil:
			return core.FieldErrorf("early_termination.slack_amount", "give slack_factor or slack_amount, not both")
		case p.SlackFactor != nil && !(*p.SlackFactor > 0):
			return core.FieldErrorf("early_termination.slack_factor", "must be greater than 0, got %s", job.FormatInputValue(*p.SlackFactor))
		case p.SlackAmount != nil && !(*p.SlackAmount > 0):
			return core.FieldErrorf("early_termination.slack_amount", "must be greater than 0, got %s", job.FormatInputValue(*p.SlackAmount))
		}
	case job.PolicyTruncationSelection:
		if p.TruncationPercentage < job.MinTruncationPercent || p.TruncationPercentage > job.MaxTruncationPercent {
			return core.FieldErrorf("early_termination.truncation_percentage", "must be between %d and %d (the percentage of the worst trials to cancel at each evaluation), got %d", job.MinTruncationPercent, job.MaxTruncationPercent, p.TruncationPercentage)
		}
	}
	return nil
}
