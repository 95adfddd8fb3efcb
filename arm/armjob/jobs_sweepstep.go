package armjob

import (
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// sweepStepKeys are the keys of a pipeline's sweep step as azure-ai-ml
// writes it (Sweep._to_rest_object: the node's own keys, its sweep's in
// the YAML's snake_case, the trial as a component id).
var sweepStepKeys = []string{"type", "name", "_source", "comment", "computeId", "inputs", "outputs", "display_name", "displayName",
	"description", "tags", "properties", "trial", "search_space", "sampling_algorithm", "objective", "limits", "early_termination"}

// policyTypes spell the REST early termination policies as the YAML does.
var policyTypes = map[string]string{"bandit": "bandit", "medianstopping": "median_stopping", "truncationselection": "truncation_selection"}

// sweepStep turns a pipeline's sweep step (a .sweep() node of a
// @dsl.pipeline) into the YAML's: its trial the component the SDK
// registered, its search space, sampling, objective and limits as
// written, its early termination policy (a REST object) in the YAML's
// words.
func (t jobTranslator) sweepStep(o obj) (doc, error) {
	if err := o.checkKeys("a pipeline's sweep step", sweepStepKeys...); err != nil {
		return nil, err
	}
	d := doc{"type": "sweep"}
	if err := t.stepCommon(o, d); err != nil {
		return nil, err
	}
	trial, err := o.sub("trial")
	if err != nil {
		return nil, err
	}
	id, err := trial.str("componentId")
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, core.FieldErrorf(o.field("trial"), "is required: the trial's component, {componentId: <the ARM id of a component version>}")
	}
	if d["trial"], err = assetRef(trial.field("componentId"), t.ws, "components", id); err != nil {
		return nil, err
	}
	for _, k := range []string{"search_space", "sampling_algorithm", "objective", "limits"} {
		if v := o.raw(k); v != nil {
			d[k] = v
		}
	}
	if o.has("early_termination") {
		et, err := o.sub("early_termination")
		if err != nil {
			return nil, err
		}
		typ, err := lowerType(et, policyTypes, "policy_type", "policyType", "type")
		if err != nil {
			return nil, err
		}
		p := snakeKeys(et, [2]string{"evaluationInterval", "evaluation_interval"}, [2]string{"delayEvaluation", "delay_evaluation"},
			[2]string{"slackFactor", "slack_factor"}, [2]string{"slackAmount", "slack_amount"}, [2]string{"truncationPercentage", "truncation_percentage"})
		p["type"] = typ
		d["early_termination"] = p
	}
	if err := t.stepIO(o, d); err != nil {
		return nil, err
	}
	return d, nil
}

// stepCommon reads what every step has: its names, tags and compute.
func (t jobTranslator) stepCommon(o obj, d doc) error {
	for _, k := range [][2]string{{"displayName", "display_name"}, {"description", "description"}} {
		s, err := o.str(k[0], k[1])
		if err != nil {
			return err
		}
		d.setStr(k[1], s)
	}
	if tags, err := o.strMap("tags"); err != nil {
		return err
	} else if len(tags) > 0 {
		d["tags"] = tags
	}
	if id, err := o.str("computeId"); err != nil {
		return err
	} else if id != "" {
		var err error
		if d["compute"], err = computeRef(o.field("computeId"), t.ws, id); err != nil {
			return err
		}
	}
	return nil
}

// stepIO reads a step's inputs and outputs.
func (t jobTranslator) stepIO(o obj, d doc) error {
	if in, err := t.stepInputs(o); err != nil {
		return err
	} else if len(in) > 0 {
		d["inputs"] = in
	}
	if out, err := stepOutputs(o); err != nil {
		return err
	} else if len(out) > 0 {
		d["outputs"] = out
	}
	return nil
}

// restPolicyTypes spell the YAML's early termination policies as REST's.
var restPolicyTypes = map[string]string{"bandit": "Bandit", "median_stopping": "MedianStopping", "truncation_selection": "TruncationSelection"}

// sweepStepProps makes a pipeline step's answer d a sweep step's, as
// azure-ai-ml reads one back (Sweep._from_rest_object): its trial the
// component, its sweep in the YAML's keys, its early termination policy
// a REST object.
func sweepStepProps(st *job.PipelineStep, d map[string]any) {
	d["type"] = "sweep"
	d["trial"] = map[string]any{"componentId": d["componentId"]}
	delete(d, "componentId")
	sw := st.Sweep
	d["search_space"] = sw.SearchSpace
	d["objective"] = sw.Objective
	if sw.SamplingAlgorithm != nil {
		d["sampling_algorithm"] = sw.SamplingAlgorithm
	}
	if sw.Limits != nil {
		d["limits"] = sw.Limits
	}
	if e := sw.EarlyTermination; e != nil {
		p := map[string]any{"policy_type": restPolicyTypes[e.Type], "evaluation_interval": e.EvaluationInterval, "delay_evaluation": e.DelayEvaluation}
		if e.SlackFactor != nil {
			p["slack_factor"] = *e.SlackFactor
		}
		if e.SlackAmount != nil {
			p["slack_amount"] = *e.SlackAmount
		}
		if e.TruncationPercentage != 0 {
			p["truncation_percentage"] = e.TruncationPercentage
		}
		d["early_termination"] = p
	}
}
