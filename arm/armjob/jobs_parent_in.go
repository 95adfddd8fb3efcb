package armjob

import (
	"encoding/json"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// snakeKeys turns the listed camelCase keys of o into the YAML's
// snake_case ones (either spelling read), leaving out absent ones.
func snakeKeys(o obj, pairs ...[2]string) map[string]any {
	out := map[string]any{}
	for _, p := range pairs {
		if v := o.raw(p[0], p[1]); v != nil {
			out[p[1]] = v
		}
	}
	return out
}

// lowerType reads o's type under any of names, lower-cased and turned
// into the YAML's spelling by names (nil: lower-cased as it is).
func lowerType(o obj, spell map[string]string, names ...string) (string, error) {
	s, err := o.str(names...)
	if err != nil || s == "" {
		return s, err
	}
	if y, ok := spell[strings.ToLower(s)]; ok {
		return y, nil
	}
	return strings.ToLower(s), nil
}

// sweep turns a SweepJob's properties into a sweep job document.
func (t jobTranslator) sweep(p obj) (doc, error) {
	if err := p.checkKeys("a SweepJob", append(append([]string{"trial", "searchSpace", "samplingAlgorithm", "objective", "limits",
		"earlyTermination", "inputs", "outputs", "queueSettings"}, commonJobKeys...), readOnlyJobKeys...)...); err != nil {
		return nil, err
	}
	d := doc{"type": "sweep"}
	if err := t.common(p, d); err != nil {
		return nil, err
	}
	if err := t.inOut(p, d); err != nil {
		return nil, err
	}
	if err := queueSettingsDoc(p, d); err != nil {
		return nil, err
	}
	trial, err := p.sub("trial")
	if err != nil {
		return nil, err
	}
	if err := trial.checkKeys("a sweep's trial", "command", "codeId", "environmentId", "environmentVariables", "distribution", "resources"); err != nil {
		return nil, err
	}
	td := doc{}
	if err := t.trialLike(trial, td); err != nil {
		return nil, err
	}
	labelCode(trial, td)
	d["trial"] = td
	if d["search_space"], err = searchSpaceDoc(p); err != nil {
		return nil, err
	}
	if p.has("samplingAlgorithm") {
		o, err := p.sub("samplingAlgorithm")
		if err != nil {
			return nil, err
		}
		s := snakeKeys(o, [2]string{"seed", "seed"})
		if s["type"], err = lowerType(o, nil, "samplingAlgorithmType", "sampling_algorithm_type", "type"); err != nil {
			return nil, err
		}
		if rule, err := lowerType(o, nil, "rule"); err != nil {
			return nil, err
		} else if rule != "" {
			s["rule"] = rule
		}
		d["sampling_algorithm"] = s
	}
	if p.has("objective") {
		o, err := p.sub("objective")
		if err != nil {
			return nil, err
		}
		obj := snakeKeys(o, [2]string{"primaryMetric", "primary_metric"})
		if obj["goal"], err = lowerType(o, nil, "goal"); err != nil {
			return nil, err
		}
		d["objective"] = obj
	}
	if p.has("limits") {
		o, err := p.sub("limits")
		if err != nil {
			return nil, err
		}
		d["limits"] = snakeKeys(o, [2]string{"maxTotalTrials", "max_total_trials"}, [2]string{"maxConcurrentTrials", "max_concurrent_trials"},
			[2]string{"timeout", "timeout"}, [2]string{"trialTimeout", "trial_timeout"})
	}
	if p.has("earlyTermination") {
		o, err := p.sub("earlyTermination")
		if err != nil {
			return nil, err
		}
		e := snakeKeys(o, [2]string{"evaluationInterval", "evaluation_interval"}, [2]string{"delayEvaluation", "delay_evaluation"},
			[2]string{"slackFactor", "slack_factor"}, [2]string{"slackAmount", "slack_amount"}, [2]string{"truncationPercentage", "truncation_percentage"})
		if e["type"], err = lowerType(o, map[string]string{"medianstopping": "median_stopping", "truncationselection": "truncation_selection"},
			"policyType", "policy_type", "type"); err != nil {
			return nil, err
		}
		d["early_termination"] = e
	}
	return d, nil
}

// searchArgs are the YAML keys of each distribution's arguments, in the
// order Azure's REST list [type, [args]] gives them.
var searchArgs = map[string][]string{
	"randint": {"upper"}, "uniform": {"min_value", "max_value"}, "loguniform": {"min_value", "max_value"},
	"quniform": {"min_value", "max_value", "q"}, "qloguniform": {"min_value", "max_value", "q"},
	"normal": {"mu", "sigma"}, "lognormal": {"mu", "sigma"}, "qnormal": {"mu", "sigma", "q"}, "qlognormal": {"mu", "sigma", "q"},
}

// searchSpaceDoc turns searchSpace {name: ["choice", [[v…]]] |
// ["uniform", [min, max]] | …} (Azure's REST form, HyperDrive's) into the
// YAML's {name: {type, values | min_value, max_value | …}}.
func searchSpaceDoc(p obj) (map[string]any, error) {
	o, err := p.sub("searchSpace")
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for name, raw := range o.m {
		field := o.field(name)
		var pair []json.RawMessage
		if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
			return nil, core.FieldErrorf(field, "must be [\"<distribution>\", [<arguments>]] (e.g. [\"choice\", [[1, 2]]])")
		}
		var typ string
		if err := json.Unmarshal(pair[0], &typ); err != nil {
			return nil, core.FieldErrorf(field+"[0]", "must be a distribution's name (choice, randint, uniform…)")
		}
		typ = strings.ToLower(typ)
		var args []json.RawMessage
		if err := json.Unmarshal(pair[1], &args); err != nil {
			return nil, core.FieldErrorf(field+"[1]", "must be the list of the distribution's arguments")
		}
		y := map[string]any{"type": typ}
		if typ == "choice" {
			if len(args) != 1 {
				return nil, core.FieldErrorf(field+"[1]", "a choice's arguments are one list of values: [[v1, v2, …]]")
			}
			y["values"] = args[0]
			out[name] = y
			continue
		}
		keys, ok := searchArgs[typ]
		if !ok {
			return nil, core.FieldErrorf(field+"[0]", "%q is not a distribution Shoal samples (choice, randint, uniform, loguniform, normal, lognormal and their q variants)", core.Short(typ))
		}
		if len(args) != len(keys) {
			return nil, core.FieldErrorf(field+"[1]", "%s takes %d arguments (%s), got %d", typ, len(keys), strings.Join(keys, ", "), len(args))
		}
		for i, k := range keys {
			y[k] = args[i]
		}
		out[name] = y
	}
	return out, nil
}

// pipeline turns a PipelineJob's properties into a pipeline job document.
func (t jobTranslator) pipeline(p obj) (doc, error) {
	if err := p.checkKeys("a PipelineJob", append(append([]string{"jobs", "settings", "inputs", "outputs", "sourceJobId"}, commonJobKeys...), readOnlyJobKeys...)...); err != nil {
		return nil, err
	}
	d := doc{"type": "pipeline"}
	if err := t.common(p, d); err != nil {
		return nil, err
	}
	if err := t.inOut(p, d); err != nil {
		return nil, err
	}
	if s, err := p.str("sourceJobId"); err != nil {
		return nil, err
	} else if s != "" {
		return nil, core.FieldErrorf("properties.sourceJobId", "Shoal does not rerun a pipeline from another job; submit the pipeline again")
	}
	if p.has("settings") {
		o, err := p.sub("settings")
		if err != nil {
			return nil, err
		}
		s := snakeKeys(o, [2]string{"continueOnStepFailure", "continue_on_step_failure"}, [2]string{"forceRerun", "force_rerun"})
		for _, k := range [][2]string{{"defaultCompute", "default_compute"}, {"defaultDatastore", "default_datastore"}} {
			v, err := o.str(k[0], k[1])
			if err != nil {
				return nil, err
			}
			if v == "" {
				continue
			}
			if k[1] == "default_compute" {
				if v, err = computeRef(o.field(k[1]), t.ws, v); err != nil {
					return nil, err
				}
			} else if ref, ok := parseARMID(v); ok {
				v = ref.name
			}
			s[k[1]] = v
		}
		// Azure accepts keys it does not know under settings; they go
		// on as written, for the pipeline to keep and say it ignored.
		for k, v := range o.m {
			if !armKnownSettings[k] && string(v) != "null" {
				s[k] = v
			}
		}
		if len(s) > 0 {
			d["settings"] = s
		}
	}
	jobs, err := p.sub("jobs")
	if err != nil {
		return nil, err
	}
	steps := map[string]any{}
	for name := range jobs.m {
		step, err := jobs.sub(name)
		if err != nil {
			return nil, err
		}
		if steps[name], err = t.step(step); err != nil {
			return nil, err
		}
	}
	d["jobs"] = steps
	return d, nil
}

// armKnownSettings are the settings keys the translation reads, in both
// spellings, and _source, which azure-ai-ml adds to every pipeline's
// settings to say where it was built (YAML.JOB, DSL): its own record,
// not the user's setting.
var armKnownSettings = map[string]bool{"_source": true, "continueOnStepFailure": true, "continue_on_step_failure": true, "forceRerun": true,
	"force_rerun": true, "defaultCompute": true, "default_compute": true, "defaultDatastore": true, "default_datastore": true}

// stepKeys are the keys of a pipeline step as azure-ai-ml writes it
// (BaseNode._to_rest_object: both spellings occur).
var stepKeys = []string{"type", "name", "_source", "comment", "componentId", "computeId", "inputs", "outputs", "display_name", "displayName",
	"description", "tags", "properties", "environment_variables", "environmentVariables", "resources", "distribution", "limits",
	"services", "identity", "command", "code", "codeId", "environment", "environmentId"}

// step turns one of a pipeline's jobs into the YAML's step.
func (t jobTranslator) step(o obj) (doc, error) {
	typ, err := o.str("type")
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(typ, "sweep") && !strings.EqualFold(typ, "parallel") {
		if err := o.checkKeys("a pipeline step", stepKeys...); err != nil {
			return nil, err
		}
	}
	switch {
	case strings.EqualFold(typ, "sweep"):
		return t.sweepStep(o)
	case strings.EqualFold(typ, "parallel"):
		return t.parallelStep(o)
	case strings.EqualFold(typ, "pipeline"):
		return nil, core.FieldErrorf(o.field("type"), "a pipeline component's step from the SDK is not run here: Shoal runs pipeline components written in files (component: ./file.yml, type: pipeline) submitted with shoal job create -f; or make the inner @dsl.pipeline's steps steps of the outer one")
	case typ != "" && !strings.EqualFold(typ, "command"):
		return nil, core.FieldErrorf(o.field("type"), "%q: Shoal runs command, sweep and parallel steps; a %s step is not run here (make it a command step)", core.Short(typ), typ)
	}
	d := doc{"type": "command"}
	if err := t.stepCommon(o, d); err != nil {
		return nil, err
	}
	if c, err := o.str("componentId"); err != nil {
		return nil, err
	} else if strings.HasPrefix(c, InlineComponentPrefix) {
		return nil, core.FieldErrorf(o.field("componentId"), "%q is how Shoal shows an inline step of a pipeline submitted with its YAML: it names no component; submit that pipeline with its YAML (shoal job create -f), or name a registered component", core.Short(c))
	} else if c != "" {
		if d["component"], err = assetRef(o.field("componentId"), t.ws, "components", c); err != nil {
			return nil, err
		}
	}
	if err := t.trialLike(o, d); err != nil {
		return nil, err
	}
	if o.has("limits") {
		l, err := o.sub("limits")
		if err != nil {
			return nil, err
		}
		if v := l.raw("timeout"); v != nil {
			d["limits"] = map[string]any{"timeout": v}
		}
	}
	if o.has("identity") {
		id, err := identityDoc(o)
		if err != nil {
			return nil, err
		}
		d["identity"] = id
	}
	if err := servicesDoc(o, d); err != nil {
		return nil, err
	}
	if err := t.stepIO(o, d); err != nil {
		return nil, err
	}
	return d, nil
}

// stepInputs turns a step's inputs: a literal (a value or a binding
// ${{parent.…}}) stays a scalar; data is {type, path, mode}.
func (t jobTranslator) stepInputs(o obj) (map[string]any, error) {
	in, err := o.sub("inputs")
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for name := range in.m {
		v, err := in.sub(name)
		if err != nil {
			return nil, err
		}
		typ, err := v.str("job_input_type", "jobInputType", "type")
		if err != nil {
			return nil, err
		}
		if typ == "" || strings.EqualFold(typ, "literal") {
			val := v.raw("value")
			if val == nil {
				return nil, core.FieldErrorf(v.field("value"), "is required for a literal input")
			}
			out[name] = val
			continue
		}
		one, err := t.inputsDoc(obj{path: o.path, m: map[string]json.RawMessage{"inputs": rawJSON(map[string]json.RawMessage{name: in.m[name]})}})
		if err != nil {
			return nil, err
		}
		out[name] = one[name]
	}
	return out, nil
}

// stepOutputs turns a step's outputs: a binding to a pipeline output
// (${{parent.outputs.x}}) stays a string; otherwise {type, path, mode}.
func stepOutputs(o obj) (map[string]any, error) {
	outs, err := o.sub("outputs")
	if err != nil {
		return nil, err
	}
	res := map[string]any{}
	for name := range outs.m {
		v, err := outs.sub(name)
		if err != nil {
			return nil, err
		}
		typ, err := v.str("job_output_type", "jobOutputType", "type")
		if err != nil {
			return nil, err
		}
		if strings.EqualFold(typ, "literal") {
			s, err := v.str("value")
			if err != nil {
				return nil, err
			}
			res[name] = s
			continue
		}
		one, err := outputsDoc(obj{path: o.path, m: map[string]json.RawMessage{"outputs": rawJSON(map[string]json.RawMessage{name: outs.m[name]})}})
		if err != nil {
			return nil, err
		}
		res[name] = one[name]
	}
	return res, nil
}

func rawJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
