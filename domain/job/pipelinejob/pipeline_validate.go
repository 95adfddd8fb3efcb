package pipelinejob

import (
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobdecode"
	"github.com/shoal-ml/shoal/domain/job/jobio"
)

// NormalizePipelineSpec checks a decoded pipeline job and puts its
// enumerations in their canonical spelling: the pipeline's own fields,
// inputs and outputs as a command job's; every step's component (inline
// or resolved); every binding (a parent input, step or output that
// exists, of a type the input takes); inputs the component requires;
// every pipeline output bound by exactly one step; no cycle; and each
// step resolving to a valid command job. Steps whose component reference
// is not resolved yet (ResolvePipelineComponents) are checked as far as
// can be without it. Errors are EINVALID naming the path
// (jobs.train.inputs.data).
func NormalizePipelineSpec(spec *job.PipelineSpec) error {
	if spec == nil {
		return core.Errorf(core.EINVALID, "the job document is empty")
	}
	if t := strings.ToLower(strings.TrimSpace(spec.Type)); t != job.JobTypePipeline {
		return core.FieldErrorf("type", "must be pipeline for a pipeline job, got %q", core.Short(spec.Type))
	}
	spec.Type = job.JobTypePipeline
	// The fields a pipeline shares with a command job, checked on one.
	probe := &job.JobSpec{Name: spec.Name, DisplayName: spec.DisplayName, ExperimentName: spec.ExperimentName,
		Description: spec.Description, Tags: spec.Tags, Command: "true", Compute: "probe",
		Inputs: spec.Inputs, Outputs: spec.Outputs, Identity: spec.Identity}
	if err := job.NormalizeJobSpec(probe); err != nil {
		return err
	}
	for _, f := range []struct {
		field string
		value *string
	}{{"compute", &spec.Compute}, {"settings.default_compute", &spec.Settings.DefaultCompute}} {
		if strings.TrimSpace(*f.value) == "" {
			*f.value = ""
			continue
		}
		c, err := normalizeFieldCompute(f.field, *f.value)
		if err != nil {
			return err
		}
		*f.value = c
	}
	if err := core.NoControl("settings.default_datastore", spec.Settings.DefaultDatastore); err != nil {
		return err
	}
	if len(spec.Jobs) == 0 {
		return core.FieldErrorf("jobs", "is required: a mapping of step names to steps (each a command, or a component with its inputs and outputs)")
	}
	boundOutputs := map[string]string{} // pipeline output -> the step output bound to it
	for _, name := range core.SortedKeys(spec.Jobs) {
		if err := normalizePipelineStep(spec, name, boundOutputs); err != nil {
			return atSource(spec, name, err)
		}
	}
	for _, name := range core.SortedKeys(spec.Outputs) {
		if _, ok := boundOutputs[name]; !ok {
			return core.FieldErrorf(job.JobKeyPath("outputs", name), "no step binds this pipeline output: bind a step's output to it with ${{parent.outputs.%s}}", name)
		}
	}
	g, err := NewPipelineGraph(spec)
	if err != nil {
		return err
	}
	// Each step whose component is known must make a valid command job;
	// upstream outputs stand in for the paths they will have.
	run := PipelineRun{Inputs: spec.Inputs, Outputs: map[string]map[string]string{}}
	for _, e := range g.Edges() {
		if run.Outputs[e.From] == nil {
			run.Outputs[e.From] = map[string]string{}
		}
		run.Outputs[e.From][e.Output] = "azureml://jobs/" + e.From + "/outputs/" + e.Output
	}
	for _, name := range g.Order() {
		if !g.resolvable(name) {
			continue
		}
		var err error
		if spec.Jobs[name].Sweep != nil {
			_, err = g.ResolveSweep(name, run)
		} else {
			_, err = g.Resolve(name, run)
		}
		if err != nil {
			return atSource(spec, name, err)
		}
	}
	return nil
}

// normalizeFieldCompute is normalizeJobCompute naming field.
func normalizeFieldCompute(field, c string) (string, error) {
	name, err := job.NormalizeJobCompute(c)
	if err != nil {
		return "", core.FieldErrorf(field, "%s", strings.TrimPrefix(core.ErrorMessage(err), "compute: "))
	}
	return name, nil
}

func normalizePipelineStep(spec *job.PipelineSpec, name string, boundOutputs map[string]string) error {
	step := spec.Jobs[name]
	prefix := job.JobKeyPath("jobs", name) + "."
	if step == nil {
		return core.FieldErrorf(strings.TrimSuffix(prefix, "."), "has no definition: give command or component")
	}
	if err := job.ValidateJobName(name); err != nil {
		return core.FieldErrorf(strings.TrimSuffix(prefix, "."), "%q is not a step name: 1 to %d letters, digits, '-' and '_', starting with a letter or a digit", core.Short(name), job.MaxJobNameLength)
	}
	if err := checkStepType(prefix, step); err != nil {
		return err
	}
	if n := len([]rune(step.DisplayName)); n > job.MaxJobDisplayNameLength {
		return core.FieldErrorf(prefix+"display_name", "must be at most %d characters long (it has %d)", job.MaxJobDisplayNameLength, n)
	}
	if err := core.NoControl(prefix+"display_name", step.DisplayName); err != nil {
		return err
	}
	if err := core.ValidateTags(step.Tags); err != nil {
		return jobdecode.PrefixFieldError(prefix, err)
	}
	if step.Compute != "" {
		c, err := normalizeFieldCompute(prefix+"compute", step.Compute)
		if err != nil {
			return err
		}
		step.Compute = c
	}
	for _, k := range core.SortedKeys(step.EnvironmentVariables) {
		if err := job.ValidateEnvVar(k, step.EnvironmentVariables[k]); err != nil {
			return jobdecode.PrefixFieldError(prefix, err)
		}
	}
	c := step.Component
	if step.Type == job.JobTypeSweep {
		if err := checkSweepStep(prefix, step, c); err != nil {
			return err
		}
	}
	switch {
	case c == nil && step.ComponentRef == "":
		return core.FieldErrorf(strings.TrimSuffix(prefix, "."), "needs command (an inline command step) or component (azureml:<name>:<version> or azureml:<name>@latest)")
	case c == nil:
		if _, err := ParseComponentRef(prefix+"component", step.ComponentRef); err != nil {
			return err
		}
	default:
		inline := step.ComponentRef == "" && c.Name == "" && untypedInputs(c)
		cprefix := prefix + "component."
		if step.Sweep != nil {
			cprefix = prefix + "trial."
		}
		if inline {
			cprefix = prefix
		}
		if inline {
			// An inline step's output bound to a pipeline output is of
			// that output's type, unless the step says otherwise.
			for out, so := range step.Outputs {
				if co := c.Outputs[out]; co != nil && so != nil && so.Type == "" && co.Type == "" {
					if b, err := job.ParsePipelineBinding(prefix+job.JobKeyPath("outputs", out), so.Bind); err == nil && spec.Outputs[b.Name] != nil {
						co.Type = spec.Outputs[b.Name].Type
					}
				}
			}
		}
		if err := job.NormalizeComponentSpec(c, false, inline); err != nil {
			return jobdecode.PrefixFieldError(cprefix, err)
		}
		if err := checkParallelStep(prefix, step, inline); err != nil {
			return err
		}
	}
	for _, in := range core.SortedKeys(step.Inputs) {
		if err := normalizeStepInput(spec, name, in); err != nil {
			return err
		}
	}
	if c != nil {
		for _, in := range core.SortedKeys(c.Inputs) {
			d := c.Inputs[in]
			if step.Sweep != nil && step.Sweep.SearchSpace[in] != nil {
				continue // each trial's hyperparameter
			}
			if _, bound := step.Inputs[in]; !bound && !d.Optional && d.Default == nil {
				return core.FieldErrorf(prefix+job.JobKeyPath("inputs", in), "is required by the component (type %s, not optional, no default): bind it to a value, a path, ${{parent.inputs.<name>}} or ${{parent.jobs.<step>.outputs.<name>}}", d.Type)
			}
		}
	}
	for _, out := range core.SortedKeys(step.Outputs) {
		field := prefix + job.JobKeyPath("outputs", out)
		if err := job.ValidateJobIOName(prefix+"outputs", out); err != nil {
			return err
		}
		o := step.Outputs[out]
		if o == nil {
			o = &job.StepOutput{}
			step.Outputs[out] = o
		}
		var declared *job.ComponentOutput
		if c != nil {
			if declared = c.Outputs[out]; declared == nil {
				return core.FieldErrorf(field, "the component declares no output %q; its outputs: %s", core.Short(out), listOrNone(core.SortedKeys(c.Outputs)))
			}
		}
		if strings.TrimSpace(o.Type) != "" {
			t, err := jobio.NormalizeOutputType(field+".type", o.Type)
			if err != nil {
				return err
			}
			if declared != nil && declared.Type != "" && declared.Type != t {
				return core.FieldErrorf(field+".type", "is %s, but the component's output is %s", t, declared.Type)
			}
			o.Type = t
		}
		m, err := jobio.NormalizeOutputMode(field+".mode", o.Mode)
		if err != nil {
			return err
		}
		o.Mode = m
		// A path and a name of its own, checked as a job output's.
		own := &jobio.Output{Type: jobio.TypeURIFolder, Path: o.Path, Name: o.Name, Version: o.Version}
		if err := jobio.NormalizeOutput(field, own); err != nil {
			return err
		}
		o.Name, o.Version = own.Name, own.Version
		if o.Bind != "" && (o.Path != "" || o.Name != "") {
			return core.FieldErrorf(field, "binds %s: the pipeline output's path and name apply; give path and name there, not on the step", core.Short(o.Bind))
		}
		if o.Bind == "" {
			continue
		}
		b, err := job.ParsePipelineBinding(field, o.Bind)
		if err != nil {
			return err
		}
		if b.Kind != job.BindParentOutput {
			return core.FieldErrorf(field, "%s is an input binding; a step output binds to a pipeline output: ${{parent.outputs.<name>}}", core.Short(o.Bind))
		}
		po, ok := spec.Outputs[b.Name]
		if !ok {
			return core.FieldErrorf(field, "%s names pipeline output %q, which is not declared under outputs; declared: %s", o.Bind, b.Name, listOrNone(core.SortedKeys(spec.Outputs)))
		}
		if other, ok := boundOutputs[b.Name]; ok {
			return core.FieldErrorf(field, "pipeline output %s is already bound to %s; a pipeline output has one producer", b.Name, other)
		}
		boundOutputs[b.Name] = strings.TrimSuffix(prefix, ".") + ".outputs." + out
		if declared != nil && po.Type != "" && declared.Type != "" && po.Type != declared.Type {
			return core.FieldErrorf(field, "the component's output is %s but pipeline output %s is %s", declared.Type, b.Name, po.Type)
		}
	}
	return nil
}

// untypedInputs reports whether c's inputs are those Shoal declares for
// an inline command step: without types.
func untypedInputs(c *job.Component) bool {
	for _, in := range c.Inputs {
		if in != nil && in.Type != "" {
			return false
		}
	}
	return true
}

func normalizeStepInput(spec *job.PipelineSpec, stepName, name string) error {
	step := spec.Jobs[stepName]
	prefix := job.JobKeyPath("jobs", stepName) + "."
	field := prefix + job.JobKeyPath("inputs", name)
	if err := job.ValidateJobIOName(prefix+"inputs", name); err != nil {
		return err
	}
	in := step.Inputs[name]
	if in == nil {
		return core.FieldErrorf(field, "has no value: give a value, a path or a binding")
	}
	var declared *job.ComponentInput
	if c := step.Component; c != nil {
		if declared = c.Inputs[name]; declared == nil {
			// Dropped, as Azure's SDK drops it, and said (IgnoredWarnings).
			if err := ignoreInput(&spec.IgnoredInputs, field); err != nil {
				return err
			}
			delete(step.Inputs, name)
			return nil
		}
		if declared.Type == "" {
			declared = nil // an inline step's input: any type
		}
	}
	t := strings.ToLower(strings.TrimSpace(in.Type))
	if t != "" {
		if !jobio.IsPathType(t) {
			return core.FieldErrorf(field+".type", "a step input's type is one of %s (literals take the component's type), got %q", strings.Join(jobio.PathTypes, ", "), core.Short(in.Type))
		}
		in.Type = t
	}
	isData := jobio.IsPathType
	modeType := t
	if modeType == "" && declared != nil && isData(declared.Type) {
		modeType = declared.Type
	}
	m, err := jobio.NormalizeInputMode(field+".mode", modeType, in.Mode)
	if err != nil {
		return err
	}
	in.Mode = m
	wrongType := func(what, got string) error {
		return core.FieldErrorf(field, "%s is %s, but the component's input %s is %s", what, got, name, declared.Type)
	}
	switch {
	case in.Bind != "":
		if in.Value != nil || in.Path != "" {
			return core.FieldErrorf(field, "give a binding, a value or a path, not several")
		}
		b, err := job.ParsePipelineBinding(field, in.Bind)
		if err != nil {
			return err
		}
		switch b.Kind {
		case job.BindParentOutput:
			return core.FieldErrorf(field, "%s is an output binding; an input binds to ${{parent.inputs.<name>}} or ${{parent.jobs.<step>.outputs.<name>}}", core.Short(in.Bind))
		case job.BindParentInput:
			pi, ok := spec.Inputs[b.Name]
			if !ok {
				return core.FieldErrorf(field, "%s names pipeline input %q, which is not declared under inputs; declared: %s", in.Bind, b.Name, listOrNone(core.SortedKeys(spec.Inputs)))
			}
			if declared == nil {
				break
			}
			switch {
			case pi.Value != nil && isData(declared.Type):
				return wrongType("pipeline input "+b.Name, "a literal value")
			case pi.Value == nil && !isData(declared.Type):
				return wrongType("pipeline input "+b.Name, pi.Type)
			case pi.Value == nil && t != "" && t != declared.Type:
				return core.FieldErrorf(field+".type", "is %s, but the component's input is %s", t, declared.Type)
			case pi.Value != nil:
				if _, err := job.CheckComponentLiteral(field, declared, pi.Value); err != nil {
					return err
				}
			}
		case job.BindStepOutput:
			up, ok := spec.Jobs[b.Step]
			if !ok {
				return core.FieldErrorf(field, "%s names step %q, which is not a step of this pipeline; steps: %s", in.Bind, b.Step, strings.Join(core.SortedKeys(spec.Jobs), ", "))
			}
			if up != nil && up.Component != nil {
				o, ok := up.Component.Outputs[b.Name]
				if !ok {
					return core.FieldErrorf(field, "%s names output %q of step %s, which has no such output; its outputs: %s", in.Bind, b.Name, b.Step, listOrNone(core.SortedKeys(up.Component.Outputs)))
				}
				if declared != nil && isData(declared.Type) && o != nil && o.Type != "" && o.Type != declared.Type {
					return wrongType("output "+b.Name+" of step "+b.Step, o.Type)
				}
			}
			if declared != nil && !isData(declared.Type) {
				return wrongType("output "+b.Name+" of step "+b.Step, "a file or folder")
			}
		}
	case in.Value != nil:
		if in.Path != "" || in.Mode != "" || t != "" {
			return core.FieldErrorf(field, "a literal input cannot also have a path, a type or a mode")
		}
		if declared != nil && isData(declared.Type) {
			return wrongType("the value", "a literal")
		}
		typ := ""
		if declared != nil {
			typ = declared.Type
		}
		v, err := job.CheckComponentLiteral(field, &job.ComponentInput{Type: typ}, in.Value)
		if err != nil {
			return err
		}
		if declared != nil {
			if v, err = job.CheckComponentLiteral(field, declared, in.Value); err != nil {
				return err
			}
		}
		in.Value = v
	default:
		if err := jobio.CheckInputPath(field+".path", in.Path); err != nil {
			return err
		}
		if t == "" {
			t = job.InputTypeURIFolder
			if declared != nil && isData(declared.Type) {
				t = declared.Type
			}
			in.Type = t
		}
		if declared != nil && !isData(declared.Type) {
			return wrongType("the path", t)
		}
		// A path the step gives with a data type of its own keeps it
		// (Azure's examples give a uri_file to a uri_folder input): the
		// step says what its data is.
	}
	return nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// ComponentRef is a pipeline step's reference to a registered component.
type ComponentRef struct {
	Name string
	// Version is empty when Label is set.
	Version string
	Label   string
}

// ParseComponentRef parses azureml:<name>:<version> or
// azureml:<name>@latest written at field. A local file (./train.yml) is
// refused: the CLI inlines it before sending the pipeline.
func ParseComponentRef(field, s string) (ComponentRef, error) {
	const forms = "azureml:<name>:<version> or azureml:<name>@latest (a local ./file.yml is read and inlined by the CLI: submit with shoal job create -f)"
	rest, ok := asset.CutPrefixFold(strings.TrimSpace(s), "azureml:")
	if !ok {
		return ComponentRef{}, core.FieldErrorf(field, "%q is not a registered component reference: write %s", core.Short(s), forms)
	}
	var r ComponentRef
	if strings.HasPrefix(rest, "//") {
		return r, core.FieldErrorf(field, "%q names a registry's component, which Shoal does not support: register the component in the workspace (shoal component create -f FILE) and write azureml:<name>:<version>", core.Short(s))
	}
	if name, label, ok := strings.Cut(rest, "@"); ok {
		if !strings.EqualFold(label, asset.LabelLatest) {
			return r, core.FieldErrorf(field, "%q has label %q: the only label is latest (@latest)", core.Short(s), core.Short(label))
		}
		r = ComponentRef{Name: name, Label: asset.LabelLatest}
	} else if name, version, ok := strings.Cut(rest, ":"); ok {
		if job.ValidateComponentVersion(version) != nil {
			return r, core.FieldErrorf(field, "%q has an invalid version %q: a version is 1 to %d letters, digits, '-', '_' and '.'", core.Short(s), core.Short(version), job.MaxComponentVersionLength)
		}
		r = ComponentRef{Name: name, Version: version}
	} else {
		return r, core.FieldErrorf(field, "%q names no version: write azureml:%s:<version> or azureml:%s@latest", core.Short(s), core.Short(rest), core.Short(rest))
	}
	if job.ValidateComponentName(r.Name) != nil {
		return r, core.FieldErrorf(field, "%q has an invalid name %q: a name is 1 to %d letters, digits, '-', '_' and '.'", core.Short(s), core.Short(r.Name), job.MaxComponentNameLength)
	}
	return r, nil
}

// ResolvePipelineComponents fills in, at submit, the component of every
// step that names a registered one (azureml:<name>:<version> or
// azureml:<name>@latest) from the workspace's components in tx, so that
// the job keeps the version it ran even when latest moves or the version
// is archived later; then checks the whole pipeline again
// (NormalizePipelineSpec). A reference naming nothing is EINVALID on
// jobs.<step>.component.
func ResolvePipelineComponents(tx asset.AssetReader, workspace string, spec *job.PipelineSpec) error {
	if spec == nil {
		return core.Errorf(core.EINVALID, "the job document is empty")
	}
	for _, name := range core.SortedKeys(spec.Jobs) {
		step := spec.Jobs[name]
		if step == nil || step.Component != nil || step.ComponentRef == "" {
			continue
		}
		field := job.JobKeyPath("jobs", name) + ".component"
		ref, err := ParseComponentRef(field, step.ComponentRef)
		if err != nil {
			return err
		}
		var c *job.Component
		if ref.Label != "" {
			c, err = asset.LatestAssetVersion[*job.Component](tx, workspace, ref.Name)
		} else {
			c, err = asset.GetAssetVersion[*job.Component](tx, workspace, ref.Name, ref.Version)
		}
		if core.ErrorCode(err) == core.ENOTFOUND {
			return core.FieldErrorf(field, "%s names no component of workspace %s (%s); register it with shoal component create -f FILE, or list them with shoal component list", step.ComponentRef, workspace, core.ErrorMessage(err))
		} else if err != nil {
			return err
		}
		step.Component = c
	}
	return NormalizePipelineSpec(spec)
}
