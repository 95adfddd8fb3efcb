package pipelinejob

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobdecode"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
)

// A sweep step (type: sweep) runs its trial component as a sweep job:
// the search space gives some of the component's inputs, the step binds
// the others as a component step does, and the step's outputs are those
// of the sweep's best trial (control/pipelines passes them on). It is
// one child job of the pipeline, a sweep like any other, which
// control/sweeps runs.

// sweepStepKeys are the keys of a sweep step. limits and the sweep's
// mappings are checked by the sweep job's decoder.
var sweepStepKeys = compute.KeySchema{
	"type": nil, "trial": nil, "inputs": nil, "outputs": nil, "compute": nil,
	"display_name": nil, "description": nil, "tags": nil,
	"search_space": nil, "sampling_algorithm": nil, "objective": nil, "limits": nil, "early_termination": nil,
}

// decodeSweepStep decodes a sweep step; prefix is jobs.<name>.
func decodeSweepStep(raw json.RawMessage, prefix string) (*job.PipelineStep, error) {
	field := strings.TrimSuffix(prefix, ".")
	obj, err := jobdecode.CheckedMapping(raw, field, sweepStepKeys)
	if err != nil {
		return nil, err
	}
	step := &job.PipelineStep{Type: job.JobTypeSweep}
	if err := obj.DecodeFields(prefix, jobdecode.StringField("compute", &step.Compute), jobdecode.StringField("display_name", &step.DisplayName),
		jobdecode.StringField("description", &step.Description)); err != nil {
		return nil, err
	}
	if step.Tags, err = core.DecodeTags(obj["tags"]); err != nil {
		return nil, jobdecode.PrefixFieldError(prefix, err)
	}
	if len(step.Tags) == 0 {
		step.Tags = nil
	}
	if step.Inputs, err = decodeStepInputs(obj["inputs"], prefix); err != nil {
		return nil, err
	}
	if step.Outputs, err = decodeStepOutputs(obj["outputs"], prefix); err != nil {
		return nil, err
	}
	switch t := compute.NonNull(obj["trial"]); jobdecode.JSONKind(t) {
	case '"':
		ref, _ := jobdecode.JobString(t, prefix+"trial")
		if strings.TrimSpace(ref) == "" {
			return nil, core.FieldErrorf(prefix+"trial", "must not be blank")
		}
		step.ComponentRef = strings.TrimSpace(ref)
	case '{':
		if step.Component, err = job.DecodeComponentRaw(t, prefix+"trial."); err != nil {
			return nil, err
		}
	case 0:
		return nil, core.FieldErrorf(prefix+"trial", "is required: the command component each trial runs (trial: ./train.yml, which the CLI inlines, or azureml:<name>:<version>)")
	default:
		return nil, core.FieldErrorf(prefix+"trial", "must be a command component (./train.yml, azureml:<name>:<version>) or a component mapping, got %s", compute.ShortJSON(t))
	}
	// The sweep's own keys, read by the sweep job's decoder on a sweep
	// whose trial stands in.
	sd := map[string]json.RawMessage{"type": json.RawMessage(`"sweep"`), "trial": json.RawMessage(`{"command":"true"}`)}
	for _, k := range []string{"search_space", "sampling_algorithm", "objective", "limits", "early_termination"} {
		if v, ok := obj[k]; ok {
			sd[k] = v
		}
	}
	b, err := json.Marshal(sd)
	if err != nil {
		return nil, err
	}
	ss, err := sweepjob.DecodeSweepSpec(b)
	if err != nil {
		return nil, jobdecode.PrefixFieldError(prefix, err)
	}
	step.Sweep = &job.SweepStep{SearchSpace: ss.SearchSpace, SamplingAlgorithm: ss.SamplingAlgorithm, Objective: ss.Objective,
		Limits: ss.Limits, EarlyTermination: ss.EarlyTermination}
	return step, nil
}

// checkSweepStep checks what a sweep step's hyperparameters name: each
// an input of the trial component (c, nil while a reference is not
// resolved), not also bound by the step.
func checkSweepStep(prefix string, step *job.PipelineStep, c *job.Component) error {
	if step.Sweep == nil {
		return core.FieldErrorf(prefix+"search_space", "is required on a sweep step, with trial, sampling_algorithm and objective")
	}
	if len(step.Sweep.SearchSpace) == 0 {
		return core.FieldErrorf(prefix+"search_space", "is required: a mapping of the trial's input names to distributions")
	}
	for _, name := range core.SortedKeys(step.Sweep.SearchSpace) {
		field := prefix + job.JobKeyPath("search_space", name)
		if _, bound := step.Inputs[name]; bound {
			return core.FieldErrorf(field, "input %s is also bound under inputs: the search space gives it; give it one or the other", name)
		}
		if c == nil {
			continue
		}
		in := c.Inputs[name]
		if in == nil {
			return core.FieldErrorf(field, "the trial component declares no input %q: a hyperparameter is one of its inputs (%s)", core.Short(name), listOrNone(core.SortedKeys(c.Inputs)))
		}
		if in.Type != "" && !isLiteralType(in.Type) {
			return core.FieldErrorf(field, "input %s of the trial component is %s: a hyperparameter is a number, an integer, a string or a boolean", name, in.Type)
		}
		// A choice's values are what the input takes (its type, enum,
		// min and max), as a value bound to it would be.
		for i, v := range step.Sweep.SearchSpace[name].Values {
			if _, err := job.CheckComponentLiteral(fmt.Sprintf("%s.values[%d]", field, i), in, v); err != nil {
				return err
			}
		}
	}
	return nil
}

func isLiteralType(t string) bool {
	switch t {
	case "integer", "number", "string", "boolean":
		return true
	}
	return false
}

// ResolveSweep turns a sweep step into the sweep job to submit as the
// pipeline's child: its trial the component's command, with each input
// the search space gives written ${{search_space.<name>}}, its code and
// environment; the other inputs bound as Resolve binds a command step's;
// the component's outputs its outputs; the step's search space,
// sampling, objective, limits and early termination. The sweep is
// checked as NormalizeSweepSpec checks any (errors name
// jobs.<step>.<field>). Its name is left empty for the caller.
func (g *PipelineGraph) ResolveSweep(step string, run PipelineRun) (*job.SweepSpec, error) {
	s := g.spec.Jobs[step]
	prefix := job.JobKeyPath("jobs", step) + "."
	if s == nil || s.Sweep == nil {
		return nil, core.FieldErrorf(strings.TrimSuffix(prefix, "."), "is not a sweep step of this pipeline")
	}
	hyper := map[string]bool{}
	for name := range s.Sweep.SearchSpace {
		hyper[name] = true
	}
	js, err := g.resolveJob(step, run, hyper)
	if err != nil {
		return nil, err
	}
	command, err := searchSpaceRefs(js.Command, hyper)
	if err != nil {
		return nil, jobdecode.PrefixFieldError(prefix+"trial.", err)
	}
	// The step's sweep settings, copied: normalising the child's fills
	// in defaults, which must not change the pipeline's document.
	sw, err := copySweep(s.Sweep)
	if err != nil {
		return nil, core.Errorf(core.EINTERNAL, "copying the sweep of step %s: %v", step, err)
	}
	ss := &job.SweepSpec{
		Type: job.JobTypeSweep, DisplayName: js.DisplayName, ExperimentName: js.ExperimentName, Description: js.Description,
		Tags: js.Tags, Compute: js.Compute, Inputs: js.Inputs, Outputs: js.Outputs, Identity: js.Identity,
		Trial: &job.SweepTrial{Command: command, Code: js.Code, CodeAsset: js.CodeAsset, Environment: js.Environment,
			EnvironmentVariables: js.EnvironmentVariables, Resources: js.Resources, Distribution: js.Distribution},
		SearchSpace: sw.SearchSpace, SamplingAlgorithm: sw.SamplingAlgorithm, Objective: sw.Objective,
		Limits: sw.Limits, EarlyTermination: sw.EarlyTermination,
	}
	if err := sweepjob.NormalizeSweepSpec(ss); err != nil {
		return nil, jobdecode.PrefixFieldError(prefix, err)
	}
	return ss, nil
}

// searchSpaceRefs writes each ${{inputs.<name>}} of a hyperparameter as
// ${{search_space.<name>}}, which the sweep fills in per trial; every
// other reference is left for the trial's job.
func searchSpaceRefs(command string, hyper map[string]bool) (string, error) {
	var b strings.Builder
	last := 0
	for _, loc := range job.JobRefRE.FindAllStringSubmatchIndex(command, -1) {
		ns, name, _ := strings.Cut(strings.TrimSpace(command[loc[2]:loc[3]]), ".")
		if strings.TrimSpace(ns) != "inputs" || !hyper[strings.TrimSpace(name)] {
			continue
		}
		b.WriteString(command[last:loc[0]])
		b.WriteString("${{search_space." + strings.TrimSpace(name) + "}}")
		last = loc[1]
	}
	b.WriteString(command[last:])
	return b.String(), nil
}

// copySweep deep-copies a sweep step's settings, numbers kept as
// written (a choice of 0.10 stays 0.10 in the trial's command).
func copySweep(s *job.SweepStep) (*job.SweepStep, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out job.SweepStep
	return &out, d.Decode(&out)
}
