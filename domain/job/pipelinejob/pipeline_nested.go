package pipelinejob

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobdecode"
)

// A step of type pipeline runs a pipeline component: a pipeline of its
// own, with declared inputs and outputs, that Azure runs as a child
// pipeline. Shoal expands it when the document is decoded: its steps join
// the parent's graph under the name <step>-<inner step>, their bindings
// to the component's inputs replaced by what the step binds to them, and
// the component's outputs by the inner steps that produce them. So one
// engine (the graph, control/pipelines) runs every pipeline, and a step
// of a pipeline component is a command job like any other.

// MaxPipelineDepth is how deep pipeline components may nest: a pipeline
// whose step runs a pipeline component is depth 1.
const MaxPipelineDepth = 5

// MaxPipelineSteps bounds a pipeline's steps once its pipeline
// components are expanded: a component used many times, nested, grows
// the graph multiplicatively.
const MaxPipelineSteps = 500

// nestedStepKeys are the keys of a step of type pipeline.
var nestedStepKeys = compute.KeySchema{
	"type": nil, "component": nil, "inputs": nil, "outputs": nil, "compute": nil,
	"display_name": nil, "description": nil, "tags": nil,
}

// pipelineComponentKeys are the keys of a pipeline component document
// (Azure's pipelineComponent schema).
var pipelineComponentKeys = compute.KeySchema{
	"$schema": nil, "name": nil, "version": nil, "type": nil, "display_name": nil, "description": nil,
	"tags": nil, "is_deterministic": nil, "inputs": nil, "outputs": nil, "jobs": nil,
}

// nestedPipeline is a decoded step of type pipeline: what the step binds,
// and its component's declarations and (already flat) steps.
type nestedPipeline struct {
	step    *job.PipelineStep
	inputs  map[string]*job.ComponentInput
	outputs map[string]*job.ComponentOutput
	jobs    map[string]*job.PipelineStep
}

// NestedStepName is the name a step of a pipeline component gets in the
// pipeline that runs it: the pipeline step's name and its own.
func NestedStepName(step, inner string) string { return step + "-" + inner }

// decodeNestedStep decodes a step of type pipeline written at field
// (jobs.<name>), depth pipeline components deep.
func decodeNestedStep(raw json.RawMessage, field string, depth int, ignored *[]string) (*nestedPipeline, error) {
	obj, err := jobdecode.CheckedMapping(raw, field, nestedStepKeys)
	if err != nil {
		return nil, err
	}
	np := &nestedPipeline{step: &job.PipelineStep{Type: job.JobTypePipeline}}
	s := np.step
	if err := obj.DecodeFields(field+".", jobdecode.StringField("compute", &s.Compute), jobdecode.StringField("display_name", &s.DisplayName),
		jobdecode.StringField("description", &s.Description)); err != nil {
		return nil, err
	}
	if s.Inputs, err = decodeStepInputs(obj["inputs"], field+"."); err != nil {
		return nil, err
	}
	if s.Outputs, err = decodeStepOutputs(obj["outputs"], field+"."); err != nil {
		return nil, err
	}
	cfield := field + ".component"
	c := compute.NonNull(obj["component"])
	switch jobdecode.JSONKind(c) {
	case '{':
	case 0, 'n':
		return nil, core.FieldErrorf(cfield, "is required: the pipeline component the step runs (./file.yml, which the CLI inlines)")
	default:
		return nil, core.FieldErrorf(cfield, "%s: a pipeline step runs a pipeline component written in a file (component: ./file.yml, which the CLI reads and inlines); a registered pipeline component is not supported", compute.ShortJSON(c))
	}
	if depth >= MaxPipelineDepth {
		return nil, core.FieldErrorf(cfield, "pipeline components nest more than %d deep: flatten some of them", MaxPipelineDepth)
	}
	comp, err := jobdecode.CheckedMapping(c, cfield, pipelineComponentKeys)
	if err != nil {
		return nil, err
	}
	if t, err := jobdecode.JobString(comp["type"], cfield+".type"); err != nil {
		return nil, err
	} else if !strings.EqualFold(strings.TrimSpace(t), job.JobTypePipeline) {
		return nil, core.FieldErrorf(cfield+".type", "must be pipeline for a step of type pipeline, got %q (a command component runs in a step of type command)", core.Short(t))
	}
	if np.inputs, np.outputs, err = job.DecodeComponentIO(comp["inputs"], comp["outputs"], cfield+"."); err != nil {
		return nil, err
	}
	if compute.NonNull(comp["jobs"]) == nil {
		return nil, core.FieldErrorf(cfield+".jobs", "is required: the pipeline component's steps")
	}
	if np.jobs, err = decodeSteps(comp["jobs"], cfield+".", depth+1, ignored); err != nil {
		return nil, err
	}
	return np, nil
}

// expandNested puts the steps of each pipeline component (nested, by step
// name; prefix is the path of steps' mapping) into steps, and rewrites
// every binding to a nested step's output into one to the inner step
// that produces it.
func expandNested(steps map[string]*job.PipelineStep, nested map[string]*nestedPipeline, prefix string, ignored *[]string) error {
	if len(nested) == 0 {
		return nil
	}
	producers := map[string]map[string]PipelineOutputSource{}
	for _, name := range core.SortedKeys(nested) {
		p, err := expandOne(steps, nested, name, prefix, ignored)
		if err != nil {
			return err
		}
		producers[name] = p
	}
	for _, name := range core.SortedKeys(steps) {
		for _, in := range core.SortedKeys(steps[name].Inputs) {
			si := steps[name].Inputs[in]
			if si == nil || si.Bind == "" {
				continue
			}
			field := prefix + job.JobKeyPath("jobs", name) + "." + job.JobKeyPath("inputs", in)
			b, err := job.ParsePipelineBinding(field, si.Bind)
			if err != nil || b.Kind != job.BindStepOutput || nested[b.Step] == nil {
				continue // NormalizePipelineSpec names what is wrong
			}
			src, ok := producers[b.Step][b.Name]
			if !ok {
				return core.FieldErrorf(field, "%s names output %q of step %s, a pipeline component whose outputs are: %s", si.Bind, b.Name, b.Step, listOrNone(core.SortedKeys(nested[b.Step].outputs)))
			}
			si.Bind = job.PipelineBinding{Kind: job.BindStepOutput, Step: src.Step, Name: src.Output}.String()
		}
	}
	return nil
}

// expandOne adds the steps of the pipeline component that step name
// runs, and returns which inner step produces each of its outputs.
func expandOne(steps map[string]*job.PipelineStep, nested map[string]*nestedPipeline, name, prefix string, ignored *[]string) (map[string]PipelineOutputSource, error) {
	np := nested[name]
	field := prefix + job.JobKeyPath("jobs", name)
	for _, in := range core.SortedKeys(np.step.Inputs) {
		if np.inputs[in] == nil {
			// Azure's SDK builds a node's inputs from its component's
			// definition and drops the others without a word; Shoal
			// drops them too, and says so (IgnoredWarnings).
			if err := ignoreInput(ignored, field+"."+job.JobKeyPath("inputs", in)); err != nil {
				return nil, err
			}
			delete(np.step.Inputs, in)
		}
	}
	for _, out := range core.SortedKeys(np.step.Outputs) {
		if np.outputs[out] == nil {
			return nil, core.FieldErrorf(field+"."+job.JobKeyPath("outputs", out), "the pipeline component declares no output %q; its outputs: %s", core.Short(out), listOrNone(core.SortedKeys(np.outputs)))
		}
	}
	producer := map[string]PipelineOutputSource{}
	for _, inner := range core.SortedKeys(np.jobs) {
		s := np.jobs[inner]
		full := NestedStepName(name, inner)
		if _, clash := steps[full]; clash || nested[full] != nil {
			return nil, core.FieldErrorf(field, "its step %s becomes step %s of this pipeline, which another step already is: rename one of them", inner, full)
		}
		ifield := field + ".component." + job.JobKeyPath("jobs", inner)
		if s.From == "" { // else expanded one level down, its place already whole
			s.From = ifield
		}
		if err := bindNestedInputs(np, name, s, ifield); err != nil {
			return nil, err
		}
		if err := bindNestedCompute(np, s, ifield); err != nil {
			return nil, err
		}
		for _, out := range core.SortedKeys(s.Outputs) {
			so := s.Outputs[out]
			if so == nil || so.Bind == "" {
				continue
			}
			ofield := ifield + "." + job.JobKeyPath("outputs", out)
			b, err := job.ParsePipelineBinding(ofield, so.Bind)
			if err != nil {
				return nil, err
			}
			if b.Kind != job.BindParentOutput {
				continue // NormalizePipelineSpec names it
			}
			decl := np.outputs[b.Name]
			if decl == nil {
				return nil, core.FieldErrorf(ofield, "%s names output %q of the pipeline component, which declares: %s", so.Bind, b.Name, listOrNone(core.SortedKeys(np.outputs)))
			}
			if other, ok := producer[b.Name]; ok {
				return nil, core.FieldErrorf(ofield, "output %s of the pipeline component is already bound to step %s; an output has one producer", b.Name, other.Step)
			}
			producer[b.Name] = PipelineOutputSource{Step: full, Output: out}
			// The inner step's output is the component's: what the
			// pipeline step says of that output applies to it.
			ns := &job.StepOutput{Type: firstNonEmpty(so.Type, decl.Type), Mode: firstNonEmpty(so.Mode, decl.Mode)}
			if o := np.step.Outputs[b.Name]; o != nil {
				ns.Bind, ns.Path, ns.Name, ns.Version = o.Bind, o.Path, o.Name, o.Version
				ns.Type, ns.Mode = firstNonEmpty(o.Type, ns.Type), firstNonEmpty(o.Mode, ns.Mode)
			}
			s.Outputs[out] = ns
			// An inline step's own output (declared untyped) is of the
			// type the component's output gives it, as at the top.
			if c := s.Component; c != nil && s.ComponentRef == "" && c.Name == "" && untypedInputs(c) && c.Outputs[out] != nil && c.Outputs[out].Type == "" {
				c.Outputs[out].Type = ns.Type
			}
		}
		steps[full] = s
	}
	for _, out := range core.SortedKeys(np.outputs) {
		if _, ok := producer[out]; !ok {
			return nil, core.FieldErrorf(field+".component."+job.JobKeyPath("outputs", out), "is bound by none of the pipeline component's steps: bind a step's output to ${{parent.outputs.%s}}", out)
		}
	}
	return producer, nil
}

// bindNestedInputs replaces an inner step's bindings to the component's
// inputs by what the pipeline step binds to them (or the input's
// default), and its bindings to the component's steps by their new names.
func bindNestedInputs(np *nestedPipeline, name string, s *job.PipelineStep, ifield string) error {
	for _, in := range core.SortedKeys(s.Inputs) {
		si := s.Inputs[in]
		if si == nil || si.Bind == "" {
			continue
		}
		field := ifield + "." + job.JobKeyPath("inputs", in)
		b, err := job.ParsePipelineBinding(field, si.Bind)
		if err != nil {
			return err
		}
		switch b.Kind {
		case job.BindStepOutput:
			if np.jobs[b.Step] == nil {
				return core.FieldErrorf(field, "%s names step %q, which is not a step of the pipeline component; its steps: %s", si.Bind, b.Step, strings.Join(core.SortedKeys(np.jobs), ", "))
			}
			si.Bind = job.PipelineBinding{Kind: job.BindStepOutput, Step: NestedStepName(name, b.Step), Name: b.Name}.String()
		case job.BindParentInput:
			v, err := nestedInput(np, b.Name, field, si.Bind)
			if err != nil {
				return err
			}
			if v == nil {
				delete(s.Inputs, in) // an optional input the step left out
				continue
			}
			if si.Mode != "" {
				v.Mode = si.Mode
			}
			if v.Type == "" && v.Value == nil {
				v.Type = si.Type
			}
			s.Inputs[in] = v
		}
	}
	return nil
}

// nestedInput is what the pipeline step gives the component's input
// name: a copy of its binding, the input's default, or nil for an
// optional input left out.
func nestedInput(np *nestedPipeline, name, field, bind string) (*job.StepInput, error) {
	decl := np.inputs[name]
	if decl == nil {
		return nil, core.FieldErrorf(field, "%s names input %q of the pipeline component, which declares: %s", bind, name, listOrNone(core.SortedKeys(np.inputs)))
	}
	if outer := np.step.Inputs[name]; outer != nil {
		c := *outer
		return &c, nil
	}
	switch {
	case decl.Default != nil:
		return &job.StepInput{Value: decl.Default}, nil
	case decl.Optional:
		return nil, nil
	}
	return nil, core.FieldErrorf(field, "%s: input %s of the pipeline component is required (type %s, not optional, no default) and the pipeline step does not bind it", bind, name, decl.Type)
}

// bindNestedCompute resolves an inner step's compute: ${{parent.inputs.x}}
// (Azure's examples promote a step's compute to an input) becomes what
// the pipeline step gives x; no compute takes the pipeline step's.
func bindNestedCompute(np *nestedPipeline, s *job.PipelineStep, ifield string) error {
	if !job.IsPipelineBinding(s.Compute) {
		if s.Compute == "" {
			s.Compute = np.step.Compute
		}
		return nil
	}
	field := ifield + ".compute"
	b, err := job.ParsePipelineBinding(field, s.Compute)
	if err != nil {
		return err
	}
	if b.Kind != job.BindParentInput {
		return core.FieldErrorf(field, "%s: a compute binds to an input, ${{parent.inputs.<name>}}", core.Short(s.Compute))
	}
	v, err := nestedInput(np, b.Name, field, s.Compute)
	if err != nil {
		return err
	}
	switch {
	case v == nil:
		s.Compute = np.step.Compute
	case v.Bind != "":
		s.Compute = v.Bind // the outer pipeline's input, resolved there
	case v.Value != nil:
		s.Compute = fmt.Sprint(v.Value)
	default:
		return core.FieldErrorf(field, "%s is given a path; a compute is a name", core.Short(s.Compute))
	}
	return nil
}

// bindStepComputes resolves the steps' computes written as
// ${{parent.inputs.x}} to the pipeline's literal input x.
func bindStepComputes(spec *job.PipelineSpec) error {
	for _, name := range core.SortedKeys(spec.Jobs) {
		s := spec.Jobs[name]
		if s == nil || !job.IsPipelineBinding(s.Compute) {
			continue
		}
		field := job.JobKeyPath("jobs", name) + ".compute"
		b, err := job.ParsePipelineBinding(field, s.Compute)
		if err != nil {
			return err
		}
		pi := spec.Inputs[b.Name]
		if b.Kind != job.BindParentInput || pi == nil || pi.Value == nil {
			return core.FieldErrorf(field, "%s: a step's compute binds to a literal input of the pipeline (${{parent.inputs.<name>}} with inputs: {<name>: cpu-cluster}); declared: %s", core.Short(s.Compute), listOrNone(core.SortedKeys(spec.Inputs)))
		}
		s.Compute = fmt.Sprint(pi.Value)
	}
	return nil
}

// atSource names, in an error about step name, the place the step is
// written when it came from a pipeline component (jobs.model1-train_job
// is jobs.model1.component.jobs.train_job in the submitted document).
func atSource(spec *job.PipelineSpec, name string, err error) error {
	s := spec.Jobs[name]
	var e *core.Error
	if s == nil || s.From == "" || !errors.As(err, &e) {
		return err
	}
	at := job.JobKeyPath("jobs", name)
	if e.Field != at && !strings.HasPrefix(e.Field, at+".") {
		return err
	}
	return &core.Error{Code: e.Code, Field: s.From + strings.TrimPrefix(e.Field, at),
		Message: strings.Replace(e.Message, at, s.From, 1)}
}
