package pipelinejob

import (
	"encoding/json"
	"maps"
	"sort"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/interactive"
	"github.com/shoal-ml/shoal/domain/job/jobdecode"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/domain/job/paralleljob"
)

// PipelineEdge is one data dependency: step To's input Input reads step
// From's output Output.
type PipelineEdge struct {
	From   string `json:"from"`
	Output string `json:"output"`
	To     string `json:"to"`
	Input  string `json:"input"`
}

// PipelineGraph is a pipeline's steps and the edges between them (who
// reads whose outputs), in a topological order. It decides which steps
// may start (Ready) and what command job a step is (Resolve); it submits
// nothing: the pipeline's control loop does, and the scheduler places the
// child jobs like any other.
type PipelineGraph struct {
	spec  *job.PipelineSpec
	order []string
	deps  map[string][]string // step -> the steps it reads from, sorted
	edges []PipelineEdge
}

// NewPipelineGraph builds the graph of spec's steps from their
// ${{parent.jobs.<step>.outputs.<name>}} bindings. A binding to a step
// that does not exist, or steps that read each other's outputs in a
// cycle, are EINVALID errors naming the input (the cycle's path in the
// message: jobs.train.inputs.data reads jobs.prep.outputs.data, ...).
func NewPipelineGraph(spec *job.PipelineSpec) (*PipelineGraph, error) {
	if spec == nil || len(spec.Jobs) == 0 {
		return nil, core.FieldErrorf("jobs", "is required: a mapping of step names to steps")
	}
	g := &PipelineGraph{spec: spec, deps: map[string][]string{}}
	// via[to][from] is the first input (by name) of to that reads from.
	via := map[string]map[string]PipelineEdge{}
	for _, to := range core.SortedKeys(spec.Jobs) {
		step := spec.Jobs[to]
		if step == nil {
			return nil, core.FieldErrorf(job.JobKeyPath("jobs", to), "has no definition: give command or component")
		}
		via[to] = map[string]PipelineEdge{}
		for _, in := range core.SortedKeys(step.Inputs) {
			si := step.Inputs[in]
			if si == nil || si.Bind == "" {
				continue
			}
			field := job.JobKeyPath("jobs", to) + "." + job.JobKeyPath("inputs", in)
			b, err := job.ParsePipelineBinding(field, si.Bind)
			if err != nil {
				return nil, err
			}
			if b.Kind != job.BindStepOutput {
				continue
			}
			if _, ok := spec.Jobs[b.Step]; !ok {
				return nil, core.FieldErrorf(field, "%s names step %q, which is not a step of this pipeline; steps: %s", si.Bind, b.Step, strings.Join(core.SortedKeys(spec.Jobs), ", "))
			}
			e := PipelineEdge{From: b.Step, Output: b.Name, To: to, Input: in}
			g.edges = append(g.edges, e)
			if _, ok := via[to][b.Step]; !ok {
				via[to][b.Step] = e
				g.deps[to] = append(g.deps[to], b.Step)
			}
		}
		sort.Strings(g.deps[to])
	}
	if err := g.checkCycles(via); err != nil {
		return nil, err
	}
	// Kahn's algorithm, the ready steps taken by name so that the order
	// is the same on every server.
	waiting := map[string]int{}
	next := map[string][]string{}
	for _, to := range core.SortedKeys(spec.Jobs) {
		waiting[to] = len(g.deps[to])
		for _, from := range g.deps[to] {
			next[from] = append(next[from], to)
		}
	}
	var ready []string
	for _, s := range core.SortedKeys(spec.Jobs) {
		if waiting[s] == 0 {
			ready = append(ready, s)
		}
	}
	for len(ready) > 0 {
		sort.Strings(ready)
		s := ready[0]
		ready = ready[1:]
		g.order = append(g.order, s)
		for _, to := range next[s] {
			if waiting[to]--; waiting[to] == 0 {
				ready = append(ready, to)
			}
		}
	}
	return g, nil
}

// checkCycles finds a cycle by depth-first search and names it, edge by
// edge, from the first step (by name) on it.
func (g *PipelineGraph) checkCycles(via map[string]map[string]PipelineEdge) error {
	const (
		unseen = iota
		onStack
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(s string) []string
	visit = func(s string) []string {
		state[s] = onStack
		stack = append(stack, s)
		for _, d := range g.deps[s] {
			switch state[d] {
			case onStack:
				i := len(stack) - 1
				for stack[i] != d {
					i--
				}
				return append([]string(nil), stack[i:]...)
			case unseen:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[s] = done
		return nil
	}
	for _, s := range core.SortedKeys(g.spec.Jobs) {
		if state[s] != unseen {
			continue
		}
		cycle := visit(s)
		if cycle == nil {
			continue
		}
		// cycle[i] reads from cycle[i+1] (its dependency), the last from
		// the first.
		var parts []string
		names := append([]string(nil), cycle...)
		for i, to := range cycle {
			from := cycle[(i+1)%len(cycle)]
			e := via[to][from]
			parts = append(parts, "jobs."+to+".inputs."+e.Input+" reads jobs."+from+".outputs."+e.Output)
		}
		names = append(names, cycle[0])
		first := via[cycle[0]][cycle[(1)%len(cycle)]]
		return core.FieldErrorf("jobs."+cycle[0]+".inputs."+first.Input, "the steps form a cycle (%s): %s; a step can only read the outputs of steps that run before it", strings.Join(names, " → "), strings.Join(parts, ", "))
	}
	return nil
}

// Order returns the steps in a topological order: every step after the
// steps whose outputs it reads, ties by name.
func (g *PipelineGraph) Order() []string { return append([]string(nil), g.order...) }

// Dependencies returns the steps whose outputs step reads, by name.
func (g *PipelineGraph) Dependencies(step string) []string {
	return append([]string(nil), g.deps[step]...)
}

// Edges returns every data dependency, by reading step and input.
func (g *PipelineGraph) Edges() []PipelineEdge { return append([]PipelineEdge(nil), g.edges...) }

// PipelineOutputSource is the step output a pipeline output is bound to.
type PipelineOutputSource struct {
	Step   string `json:"step"`
	Output string `json:"output"`
}

// OutputSources maps each pipeline output to the step output bound to
// it (${{parent.outputs.y}}): what the pipeline's output is once that
// step has completed.
func (g *PipelineGraph) OutputSources() map[string]PipelineOutputSource {
	out := map[string]PipelineOutputSource{}
	for _, s := range g.order {
		for _, o := range core.SortedKeys(g.spec.Jobs[s].Outputs) {
			so := g.spec.Jobs[s].Outputs[o]
			if so == nil || so.Bind == "" {
				continue
			}
			if b, err := job.ParsePipelineBinding("", so.Bind); err == nil && b.Kind == job.BindParentOutput {
				out[b.Name] = PipelineOutputSource{Step: s, Output: o}
			}
		}
	}
	return out
}

// PipelinePlan is what a pipeline's control loop does next, given its
// steps' states (PipelineGraph.Ready).
type PipelinePlan struct {
	// Start lists the steps to submit now: every step they read from
	// has completed. In topological order.
	Start []string `json:"start,omitempty"`
	// Skip lists the steps that will never run: downstream of a failed
	// or canceled step, or, without continue_on_step_failure, every step
	// not started once one has failed. They stay NotStarted.
	Skip []string `json:"skip,omitempty"`
	// Cancel lists running steps to cancel: a step failed and
	// continue_on_step_failure is false.
	Cancel []string `json:"cancel,omitempty"`
	// Done says no step runs nor will: the pipeline ends with Status.
	Done bool `json:"done"`
	// Status is the pipeline's final status when Done: Completed when
	// every step completed, else Failed (a step failed) or Canceled.
	Status string `json:"status,omitempty"`
}

// Ready decides, from the statuses of the steps' child jobs (states:
// step -> job status; absent, "" or NotStarted for a step not
// submitted), which steps start, which will never run, which to cancel,
// and whether the pipeline is done. It keeps no state: the loop calls it
// after every change. A step whose upstream failed or was canceled is
// skipped; with continue_on_step_failure the steps that do not depend on
// it go on, without it nothing new starts and running steps are
// canceled.
func (g *PipelineGraph) Ready(states map[string]string) PipelinePlan {
	var plan PipelinePlan
	failed, canceled := false, false
	for _, s := range g.order {
		switch states[s] {
		case job.JobFailed:
			failed = true
		case job.JobCanceled:
			canceled = true
		}
	}
	stop := (failed || canceled) && !g.spec.Settings.ContinueOnStepFailure
	skipped := map[string]bool{}
	active := false
	for _, s := range g.order {
		st := states[s]
		if job.JobTerminal(st) {
			continue
		}
		if st != "" && st != job.JobNotStarted {
			active = true
			if stop && st != job.JobCancelRequested {
				plan.Cancel = append(plan.Cancel, s)
			}
			continue
		}
		if stop {
			skipped[s] = true
			plan.Skip = append(plan.Skip, s)
			continue
		}
		blocked, waiting := false, false
		for _, d := range g.deps[s] {
			switch ds := states[d]; {
			case skipped[d] || ds == job.JobFailed || ds == job.JobCanceled:
				blocked = true
			case ds != job.JobCompleted:
				waiting = true
			}
		}
		switch {
		case blocked:
			skipped[s] = true
			plan.Skip = append(plan.Skip, s)
		case waiting:
			active = true
		default:
			plan.Start = append(plan.Start, s)
		}
	}
	if len(plan.Start) == 0 && !active {
		plan.Done = true
		switch {
		case failed:
			plan.Status = job.JobFailed
		case canceled:
			plan.Status = job.JobCanceled
		default:
			plan.Status = job.JobCompleted
		}
	}
	return plan
}

// PipelineRun is what Resolve reads besides the spec: the pipeline's
// inputs as submitted and the outputs upstream steps produced.
type PipelineRun struct {
	// Inputs are the pipeline's inputs (their paths uploaded); nil takes
	// the spec's.
	Inputs map[string]*job.JobInput
	// Outputs maps a completed step and its output name to where the
	// output is (the artifact or URI the next step downloads).
	Outputs map[string]map[string]string
}

// resolvable reports whether step's component is known (not a reference
// still to resolve).
func (g *PipelineGraph) resolvable(step string) bool {
	s := g.spec.Jobs[step]
	return s != nil && s.Component != nil
}

// Resolve turns a step into the command job to submit as the pipeline's
// child: the component's command with its optional blocks decided, its
// code and environment; the inputs bound (literals, defaults, pipeline
// inputs, and upstream outputs as the paths run gives: a uri_folder
// output of step A is what step B downloads as its input); the outputs
// declared; compute, environment variables, resources, distribution and
// limits from the step over the component over the pipeline's defaults.
// The job is checked as NormalizeJobSpec checks any (errors name
// jobs.<step>.<field>). Its name is left empty for the caller.
func (g *PipelineGraph) Resolve(step string, run PipelineRun) (*job.JobSpec, error) {
	if s := g.spec.Jobs[step]; s != nil && s.Sweep != nil {
		return nil, core.FieldErrorf(job.JobKeyPath("jobs", step), "is a sweep step: it runs as a sweep job (ResolveSweep)")
	}
	js, err := g.resolveJob(step, run, nil)
	if err != nil {
		return nil, err
	}
	if err := job.NormalizeJobSpec(js); err != nil {
		return nil, jobdecode.PrefixFieldError(job.JobKeyPath("jobs", step)+".", err)
	}
	if err := paralleljob.Validate(js); err != nil {
		return nil, jobdecode.PrefixFieldError(job.JobKeyPath("jobs", step)+".", err)
	}
	return js, nil
}

// resolveJob is Resolve before the job is checked; the inputs in hyper
// are a sweep's hyperparameters, given by its trials: left out of the
// job's inputs and kept in its command.
func (g *PipelineGraph) resolveJob(step string, run PipelineRun, hyper map[string]bool) (*job.JobSpec, error) {
	s, ok := g.spec.Jobs[step]
	prefix := job.JobKeyPath("jobs", step) + "."
	if !ok || s == nil {
		return nil, core.FieldErrorf(strings.TrimSuffix(prefix, "."), "is not a step of this pipeline")
	}
	c := s.Component
	if c == nil {
		return nil, core.FieldErrorf(prefix+"component", "%s is not resolved yet (ResolvePipelineComponents)", core.Short(s.ComponentRef))
	}
	parentInputs := run.Inputs
	if parentInputs == nil {
		parentInputs = g.spec.Inputs
	}
	js := &job.JobSpec{
		Type: job.JobTypeCommand, DisplayName: s.DisplayName, ExperimentName: g.spec.ExperimentName,
		Description: s.Description, Tags: maps.Clone(s.Tags), Code: c.Code, CodeAsset: c.CodeAsset, Environment: cloneJSONValue(c.Environment),
		Compute: firstNonEmpty(s.Compute, g.spec.Settings.DefaultCompute, g.spec.Compute),
	}
	if js.DisplayName == "" {
		js.DisplayName = step
	}
	if js.ExperimentName == "" && g.spec.Name != "" && job.JobNameRE.MatchString(g.spec.Name) {
		js.ExperimentName = g.spec.Name
	}
	if len(c.EnvironmentVariables)+len(s.EnvironmentVariables) > 0 {
		js.EnvironmentVariables = maps.Clone(c.EnvironmentVariables)
		if js.EnvironmentVariables == nil {
			js.EnvironmentVariables = map[string]string{}
		}
		maps.Copy(js.EnvironmentVariables, s.EnvironmentVariables)
	}
	js.Resources = cloneResources(firstResources(s.Resources, c.Resources))
	if d := firstDistribution(s.Distribution, c.Distribution); d != nil {
		dd := *d
		js.Distribution = &dd
	}
	if s.Limits != nil {
		l := *s.Limits
		js.Limits = &l
	}
	if id := firstIdentity(s.Identity, g.spec.Identity); id != nil {
		c := *id
		js.Identity = &c
	}
	if len(s.Services) > 0 {
		js.Services = make(map[string]*interactive.Service, len(s.Services))
		for k, v := range s.Services {
			c := *v
			c.Properties = maps.Clone(v.Properties)
			js.Services[k] = &c
		}
	}
	provided := map[string]bool{}
	inputs := map[string]*job.JobInput{}
	names := map[string]bool{}
	for n := range c.Inputs {
		names[n] = true
	}
	for n := range s.Inputs {
		names[n] = true
	}
	for _, name := range core.SortedKeys(names) {
		if hyper[name] {
			provided[name] = true
			continue
		}
		field := prefix + job.JobKeyPath("inputs", name)
		in, err := g.resolveInput(field, s.Inputs[name], c.Inputs[name], parentInputs, run.Outputs)
		if err != nil {
			return nil, err
		}
		if in != nil {
			inputs[name] = in
			provided[name] = true
		}
	}
	if len(inputs) > 0 {
		js.Inputs = inputs
	}
	for _, name := range core.SortedKeys(c.Outputs) {
		d := c.Outputs[name]
		o := &job.JobOutput{Type: d.Type, Mode: d.Mode}
		if o.Type == "" {
			o.Type = job.InputTypeURIFolder
		}
		if so := s.Outputs[name]; so != nil {
			o.Path, o.Name, o.Version = so.Path, so.Name, so.Version
			if so.Mode != "" {
				o.Mode = so.Mode
			}
			if so.Bind != "" {
				if b, err := job.ParsePipelineBinding(prefix+job.JobKeyPath("outputs", name), so.Bind); err == nil {
					if po := g.spec.Outputs[b.Name]; po != nil {
						if so.Mode == "" && po.Mode != "" {
							o.Mode = po.Mode
						}
						// The step writes where the pipeline output's path
						// says: ${{name}} there is the pipeline's name and
						// ${{output_name}} the pipeline output's, as Azure
						// reads a pipeline's outputs.
						if po.Path != "" && g.spec.Name != "" {
							o.Path = jobio.ExpandOutputPath(po.Path, g.spec.Name, b.Name)
						}
						// A pipeline output with name: is registered by
						// the step that writes it, when that step completes.
						if po.Name != "" && o.Name == "" {
							o.Name, o.Version = po.Name, po.Version
						}
					}
				}
			}
		}
		if js.Outputs == nil {
			js.Outputs = map[string]*job.JobOutput{}
		}
		js.Outputs[name] = o
	}
	cmd, err := job.ExpandComponentCommand(c.Command, provided, nil, nil)
	if err != nil {
		return nil, jobdecode.PrefixFieldError(prefix, err)
	}
	js.Command = cmd
	if c.Parallel != nil {
		if err := resolveParallel(js, c); err != nil {
			return nil, core.Errorf(core.EINTERNAL, "copying the parallel settings of step %s: %v", step, err)
		}
	}
	return js, nil
}

// resolveInput is the job input a step gives one of its component's
// inputs: bound (si), else its default, else nil (an optional input left
// out).
func (g *PipelineGraph) resolveInput(field string, si *job.StepInput, d *job.ComponentInput, parent map[string]*job.JobInput, outputs map[string]map[string]string) (*job.JobInput, error) {
	if si == nil {
		switch {
		case d == nil || d.Optional && d.Default == nil:
			return nil, nil
		case d.Default != nil:
			return &job.JobInput{Value: d.Default}, nil
		}
		return nil, core.FieldErrorf(field, "is required by the component (type %s, not optional, no default)", d.Type)
	}
	dataType := func(t string) string {
		switch {
		case d != nil && jobio.IsPathType(d.Type):
			return d.Type
		case t != "":
			return t
		}
		return job.InputTypeURIFolder
	}
	if si.Bind == "" {
		if si.Value != nil {
			return &job.JobInput{Value: si.Value}, nil
		}
		return &job.JobInput{Type: firstNonEmpty(si.Type, dataType("")), Path: si.Path, Mode: si.Mode}, nil
	}
	b, err := job.ParsePipelineBinding(field, si.Bind)
	if err != nil {
		return nil, err
	}
	switch b.Kind {
	case job.BindParentInput:
		pi := parent[b.Name]
		if pi == nil {
			return nil, core.FieldErrorf(field, "%s names pipeline input %q, which the pipeline does not have", si.Bind, b.Name)
		}
		in := *pi
		if si.Mode != "" {
			in.Mode = si.Mode
		}
		if in.Value != nil && d != nil && d.Type != "" {
			// The pipeline's literal, as the component's type has it
			// ("5" for an integer input becomes 5).
			v, err := job.CheckComponentLiteral(field, d, in.Value)
			if err != nil {
				return nil, err
			}
			in.Value = v
		}
		if in.Value == nil && in.Path != "" {
			in.Type = dataType(in.Type)
		}
		return &in, nil
	case job.BindStepOutput:
		p := outputs[b.Step][b.Name]
		if p == "" {
			return nil, core.FieldErrorf(field, "%s: step %s has produced no output %s (has it completed?)", si.Bind, b.Step, b.Name)
		}
		t := ""
		if up := g.spec.Jobs[b.Step]; up != nil && up.Component != nil && up.Component.Outputs[b.Name] != nil {
			t = up.Component.Outputs[b.Name].Type
		}
		return &job.JobInput{Type: dataType(t), Path: p, Mode: si.Mode}, nil
	}
	return nil, core.FieldErrorf(field, "%s is an output binding; an input binds to ${{parent.inputs.<name>}} or ${{parent.jobs.<step>.outputs.<name>}}", core.Short(si.Bind))
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

func firstResources(a, b *job.JobResources) *job.JobResources {
	if a != nil {
		return a
	}
	return b
}

func firstDistribution(a, b *job.Distribution) *job.Distribution {
	if a != nil {
		return a
	}
	return b
}

func cloneResources(r *job.JobResources) *job.JobResources {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}

// cloneJSONValue deep-copies a value of JSON shape (an inline
// environment mapping), so that normalising a step's job never changes
// the component it came from.
func cloneJSONValue(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if job.JobUnmarshalAny(b, &out) != nil {
		return v
	}
	return out
}

// firstIdentity returns the step's identity, else the pipeline's.
func firstIdentity(step, pipeline *job.JobIdentity) *job.JobIdentity {
	if step != nil {
		return step
	}
	return pipeline
}
