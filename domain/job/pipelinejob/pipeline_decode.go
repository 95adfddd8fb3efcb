package pipelinejob

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobdecode"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/domain/job/paralleljob"
)

// pipelineKeys are the keys of a pipeline job document that a user writes.
var pipelineKeys = compute.KeySchema{
	"$schema": nil, "name": nil, "type": nil, "display_name": nil, "experiment_name": nil,
	"description": nil, "tags": nil, "compute": nil, "inputs": nil, "outputs": nil, "jobs": nil, "identity": nil,
	"notification_setting": nil,
	// settings takes keys Shoal does not know, as Azure's
	// PipelineJobSettingsSchema does (unknown=INCLUDE): they are kept in
	// PipelineSettings.Ignored and the job says so (IgnoredSettingsWarning).
	"settings": nil,
	// What a shown job says it ignored, never read from a document.
	"ignored_inputs": compute.ReadOnly,
}

// knownSettings are the settings Shoal reads.
var knownSettings = []string{"continue_on_step_failure", "default_compute", "default_datastore", "force_rerun"}

// stepKeys are the keys of a pipeline step. command, code and environment
// make an inline command step; component names what a component step
// runs.
var stepKeys = compute.KeySchema{
	"type": nil, "component": nil, "inputs": nil, "outputs": nil, "compute": nil,
	"environment_variables": nil, "display_name": nil, "description": nil, "tags": nil,
	"command": nil, "code": nil, "environment": nil, "identity": nil, "services": nil,
	"resources":    compute.KeySchema{"instance_count": nil, "instance_type": nil, "shm_size": nil, "properties": nil},
	"distribution": job.DistributionKeys,
	"limits":       compute.KeySchema{"timeout": nil},
}

// stepJobKeys are the step keys decoded as a command job's.
var stepJobKeys = []string{"command", "code", "environment", "environment_variables", "compute",
	"resources", "distribution", "limits", "display_name", "description", "tags", "identity", "services"}

// stepOutputKeys are the keys of a step's output mapping.
var stepOutputKeys = compute.KeySchema{"type": nil, "mode": nil, "path": nil, "name": nil, "version": nil}

// DecodeJobType returns the type of a job document, lower-cased, or ""
// when it has none (a command job): callers decode a command job with
// DecodeJobSpec and a pipeline with DecodePipelineSpec.
func DecodeJobType(data []byte) (string, error) {
	d, err := jobdecode.UnmarshalJobDocument(bytes.TrimSpace(data))
	if err != nil {
		return "", err
	}
	t, err := jobdecode.JobString(d["type"], "type")
	return strings.ToLower(strings.TrimSpace(t)), err
}

// DecodePipelineSpec decodes a pipeline job document (JSON with the
// snake_case YAML keys, as the CLI sends it: local component files
// inlined, local paths uploaded). Unknown keys and values of the wrong
// shape are EINVALID errors naming their path (jobs.train.inputs.data);
// the rules across steps (bindings, types, cycles) are
// NormalizePipelineSpec's. Read-only keys of show output are ignored.
func DecodePipelineSpec(data []byte) (*job.PipelineSpec, error) {
	d, err := jobdecode.ParseJobDocument(data)
	if err != nil {
		return nil, err
	}
	spec := &job.PipelineSpec{}
	if spec.Type, err = d.RequireType(job.JobTypePipeline); err != nil {
		return nil, err
	}
	if err := d.CheckKeys("pipeline job", pipelineKeys); err != nil {
		return nil, err
	}
	fields := append(jobdecode.JobNameFields(&spec.Name, &spec.DisplayName, &spec.ExperimentName, &spec.Description),
		jobdecode.StringField("compute", &spec.Compute), jobdecode.TagsField(&spec.Tags),
		jobdecode.ValueField("inputs", &spec.Inputs, decodePipelineInputs), jobdecode.ValueField("outputs", &spec.Outputs, jobio.DecodeOutputs),
		jobdecode.JobField{Key: "settings", Decode: func(raw json.RawMessage, _ string) error { return decodePipelineSettings(raw, &spec.Settings) }},
		jobdecode.ValueField("jobs", &spec.Jobs, func(raw json.RawMessage) (steps map[string]*job.PipelineStep, err error) {
			steps, spec.IgnoredInputs, err = decodePipelineSteps(raw)
			return steps, err
		}),
		jobdecode.ValueField("identity", &spec.Identity, job.DecodeJobIdentity),
		jobdecode.ValueField("notification_setting", &spec.NotificationSetting, job.DecodeNotificationSetting),
	)
	if err := d.DecodeFields("", fields...); err != nil {
		return nil, err
	}
	if err := bindStepComputes(spec); err != nil {
		return nil, err
	}
	return spec, nil
}

// decodePipelineInputs decodes a pipeline's inputs as a command job's,
// which bind nothing: a binding names another step's value, and the
// pipeline has no step above it.
func decodePipelineInputs(raw json.RawMessage) (map[string]*job.JobInput, error) {
	inputs, err := jobio.DecodeInputs(raw)
	if err != nil {
		return nil, err
	}
	for _, name := range core.SortedKeys(inputs) {
		if in := inputs[name]; job.IsPipelineBinding(in.Path) || job.IsPipelineBinding(job.FormatInputValue(in.Value)) {
			return nil, core.FieldErrorf(job.JobKeyPath("inputs", name), "a pipeline input is a value or a path; bindings (${{...}}) belong in the steps' inputs")
		}
	}
	return inputs, nil
}

func decodePipelineSettings(raw json.RawMessage, s *job.PipelineSettings) error {
	m, err := jobdecode.DecodeMapping(raw, "settings")
	if m == nil {
		return err
	}
	for _, k := range core.SortedKeys(m) {
		if slices.Contains(knownSettings, k) || compute.NonNull(m[k]) == nil {
			continue
		}
		if len(k) > maxSettingNameLength || core.NoControl("settings", k) != nil {
			return core.FieldErrorf("settings", "%q is not a setting name: at most %d characters, no control characters", core.Short(k), maxSettingNameLength)
		}
		if len(m[k]) > maxIgnoredSettingBytes {
			return core.FieldErrorf("settings."+k, "is not a setting Shoal knows, and its value is over %d bytes: remove it", maxIgnoredSettingBytes)
		}
		if s.Ignored == nil {
			s.Ignored = map[string]json.RawMessage{}
		}
		if len(s.Ignored) == maxIgnoredSettings {
			return core.FieldErrorf("settings."+k, "is one more setting Shoal does not know than the %d it keeps: remove the ones Azure does not read either", maxIgnoredSettings)
		}
		s.Ignored[k] = append(json.RawMessage(nil), m[k]...)
	}
	return m.DecodeFields("settings.",
		jobdecode.StringField("default_compute", &s.DefaultCompute), jobdecode.StringField("default_datastore", &s.DefaultDatastore),
		boolField("continue_on_step_failure", func(v bool) { s.ContinueOnStepFailure = v }),
		boolField("force_rerun", func(v bool) { s.ForceRerun = &v }),
	)
}

// boolField decodes true or false into set; absent or null leaves it.
func boolField(key string, set func(bool)) jobdecode.JobField {
	return jobdecode.JobField{Key: key, Decode: func(raw json.RawMessage, path string) error {
		if v := compute.NonNull(raw); v != nil {
			var x bool
			if err := json.Unmarshal(v, &x); err != nil {
				return core.FieldErrorf(path, "must be true or false, got %s", compute.ShortJSON(v))
			}
			set(x)
		}
		return nil
	}}
}

// decodePipelineSteps decodes the steps, which are required.
// It also returns the places of the inputs given to pipeline component
// steps that their components do not declare, which were dropped.
func decodePipelineSteps(raw json.RawMessage) (map[string]*job.PipelineStep, []string, error) {
	if compute.NonNull(raw) == nil {
		return nil, nil, core.FieldErrorf("jobs", "is required: a mapping of step names to steps (each a command, or a component with its inputs and outputs)")
	}
	var ignored []string
	steps, err := decodeSteps(raw, "", 0, &ignored)
	return steps, ignored, err
}

// decodeSteps decodes the steps of a pipeline (prefix "") or of a
// pipeline component (prefix jobs.<step>.component.), depth components
// deep; the steps of type pipeline are expanded into the others
// (expandNested), so what it returns runs as one graph. The places of
// inputs a pipeline component does not declare are added to ignored.
func decodeSteps(raw json.RawMessage, prefix string, depth int, ignored *[]string) (map[string]*job.PipelineStep, error) {
	var jobs map[string]json.RawMessage
	if jobdecode.JSONKind(raw) != '{' || json.Unmarshal(raw, &jobs) != nil {
		return nil, core.FieldErrorf(prefix+"jobs", "must be a mapping of step names to steps, got %s", compute.ShortJSON(raw))
	}
	if len(jobs) == 0 {
		return nil, core.FieldErrorf(prefix+"jobs", "must have at least one step")
	}
	steps := make(map[string]*job.PipelineStep, len(jobs))
	nested := map[string]*nestedPipeline{}
	for _, name := range core.SortedKeys(jobs) {
		field := prefix + job.JobKeyPath("jobs", name)
		if err := job.ValidateJobName(name); err != nil {
			return nil, core.FieldErrorf(field, "%q is not a step name: 1 to %d letters, digits, '-' and '_', starting with a letter or a digit", core.Short(name), job.MaxJobNameLength)
		}
		if stepTypeOf(jobs[name]) == job.JobTypePipeline {
			np, err := decodeNestedStep(jobs[name], field, depth, ignored)
			if err != nil {
				return nil, err
			}
			nested[name] = np
			continue
		}
		decode := decodePipelineStep
		switch stepTypeOf(jobs[name]) {
		case job.JobTypeSweep:
			decode = decodeSweepStep
		case job.JobTypeParallel:
			decode = decodeParallelStep
		}
		step, err := decode(jobs[name], field+".")
		if err != nil {
			return nil, err
		}
		steps[name] = step
	}
	if err := expandNested(steps, nested, prefix, ignored); err != nil {
		return nil, err
	}
	if len(steps) > MaxPipelineSteps {
		return nil, core.FieldErrorf(prefix+"jobs", "has %d steps once its pipeline components are expanded, more than %d", len(steps), MaxPipelineSteps)
	}
	return steps, nil
}

// stepTypeOf is a step's type, lower-cased ("" when it has none or the
// step is not a mapping: decodePipelineStep says what is wrong).
func stepTypeOf(raw json.RawMessage) string {
	var typed struct {
		Type any `json:"type"`
	}
	_ = json.Unmarshal(raw, &typed)
	t, _ := typed.Type.(string)
	return strings.ToLower(strings.TrimSpace(t))
}

// decodePipelineStep decodes one step; prefix is jobs.<name>.
func decodePipelineStep(raw json.RawMessage, prefix string) (*job.PipelineStep, error) {
	field := strings.TrimSuffix(prefix, ".")
	if jobdecode.JSONKind(raw) != '{' {
		return nil, core.FieldErrorf(field, "must be a step: a mapping with command (an inline command step) or component, and their inputs and outputs; got %s", compute.ShortJSON(raw))
	}
	// The type first: a spark or automl step has keys of its own, and
	// "Shoal does not run Spark jobs" says more than "unknown key identity".
	var typed struct {
		Type json.RawMessage `json:"type"`
	}
	_ = json.Unmarshal(raw, &typed)
	step := &job.PipelineStep{}
	var err error
	if step.Type, err = jobdecode.JobString(typed.Type, prefix+"type"); err != nil {
		return nil, err
	}
	if err := checkStepType(prefix, step); err != nil {
		return nil, err
	}
	obj, err := jobdecode.CheckedMapping(raw, field, stepKeys)
	if err != nil {
		return nil, err
	}
	// The command job keys, decoded as a command job's are.
	js, err := job.DecodeAsCommandJob(obj.Pick(func(k string) bool { return slices.Contains(stepJobKeys, k) }), prefix)
	if err != nil {
		return nil, err
	}
	step.DisplayName, step.Description, step.Tags = js.DisplayName, js.Description, js.Tags
	step.Compute, step.EnvironmentVariables = js.Compute, js.EnvironmentVariables
	step.Resources, step.Distribution, step.Limits = js.Resources, js.Distribution, js.Limits
	step.Identity, step.Services = js.Identity, js.Services

	if step.Inputs, err = decodeStepInputs(obj["inputs"], prefix); err != nil {
		return nil, err
	}
	if step.Outputs, err = decodeStepOutputs(obj["outputs"], prefix); err != nil {
		return nil, err
	}
	inline := compute.NonNull(obj["command"]) != nil
	switch c := compute.NonNull(obj["component"]); {
	case c == nil && !inline:
		return nil, core.FieldErrorf(field, "needs command (an inline command step) or component (./file.yml, azureml:<name>:<version> or azureml:<name>@latest)")
	case c != nil && inline:
		return nil, core.FieldErrorf(prefix+"command", "a step with a component runs the component's command: give command or component, not both")
	case c != nil:
		for _, k := range []string{"code", "environment"} {
			if compute.NonNull(obj[k]) != nil {
				return nil, core.FieldErrorf(prefix+k, "a step with a component takes its %s from the component; set it there", k)
			}
		}
		if err := decodeStepComponent(c, prefix, step, "a component reference (azureml:<name>:<version>, azureml:<name>@latest, or a local ./file.yml that the CLI inlines)"); err != nil {
			return nil, err
		}
	default:
		// An inline command step: an anonymous component whose inputs and
		// outputs are the ones the step binds.
		step.Component = &job.Component{Type: job.ComponentTypeCommand, Command: js.Command, Code: js.Code, CodeAsset: js.CodeAsset, Environment: js.Environment}
		inlineComponentIO(step)
	}
	return step, nil
}

// decodeStepComponent reads a step's component (c, not null): a
// reference kept for ResolvePipelineComponents, or a mapping of any type
// (a step whose type is not its component's is refused by
// checkParallelStep, saying which to write). what says what a reference
// is, for the error on anything else.
func decodeStepComponent(c json.RawMessage, prefix string, step *job.PipelineStep, what string) error {
	switch jobdecode.JSONKind(c) {
	case '"':
		ref, _ := jobdecode.JobString(c, prefix+"component")
		if strings.TrimSpace(ref) == "" {
			return core.FieldErrorf(prefix+"component", "must not be blank")
		}
		step.ComponentRef = strings.TrimSpace(ref)
	case '{':
		var err error
		if step.Component, err = paralleljob.DecodeComponent(c, prefix+"component."); err != nil {
			return err
		}
	default:
		return core.FieldErrorf(prefix+"component", "must be %s or a component mapping, got %s", what, compute.ShortJSON(c))
	}
	return nil
}

// inlineComponentIO declares on an inline step's anonymous component the
// inputs and outputs the step binds: the inputs untyped (they take the
// type of what is bound), the outputs of the step's type.
func inlineComponentIO(step *job.PipelineStep) {
	for name := range step.Inputs {
		if step.Component.Inputs == nil {
			step.Component.Inputs = map[string]*job.ComponentInput{}
		}
		step.Component.Inputs[name] = &job.ComponentInput{}
	}
	for name, o := range step.Outputs {
		if step.Component.Outputs == nil {
			step.Component.Outputs = map[string]*job.ComponentOutput{}
		}
		step.Component.Outputs[name] = &job.ComponentOutput{Type: o.Type}
	}
}

func decodeStepInputs(raw json.RawMessage, prefix string) (map[string]*job.StepInput, error) {
	if compute.NonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if jobdecode.JSONKind(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, core.FieldErrorf(prefix+"inputs", "must be a mapping of input names to values, paths or bindings (${{parent.inputs.x}}, ${{parent.jobs.<step>.outputs.y}})")
	}
	out := make(map[string]*job.StepInput, len(m))
	for _, name := range core.SortedKeys(m) {
		field := prefix + job.JobKeyPath("inputs", name)
		v := m[name]
		if jobdecode.JSONKind(v) == '"' {
			s, err := jobdecode.JobString(v, field)
			if err != nil {
				return nil, err
			}
			if job.IsPipelineBinding(s) {
				out[name] = &job.StepInput{Bind: strings.TrimSpace(s)}
				continue
			}
		}
		if jobdecode.JSONKind(v) == '{' {
			var o map[string]json.RawMessage
			if json.Unmarshal(v, &o) == nil {
				if p, _ := jobdecode.JobString(o["path"], ""); job.IsPipelineBinding(p) {
					if err := compute.CheckKeys(v, field, compute.KeySchema{"type": nil, "path": nil, "mode": nil}); err != nil {
						return nil, err
					}
					in := &job.StepInput{Bind: strings.TrimSpace(p)}
					var err error
					if in.Type, err = jobdecode.JobString(o["type"], field+".type"); err != nil {
						return nil, err
					}
					if in.Mode, err = jobdecode.JobString(o["mode"], field+".mode"); err != nil {
						return nil, err
					}
					out[name] = in
					continue
				}
			}
		}
		in, err := jobio.DecodeInput(field, v)
		if err != nil {
			return nil, err
		}
		out[name] = &job.StepInput{Value: in.Value, Type: in.Type, Path: in.Path, Mode: in.Mode}
	}
	return out, nil
}

func decodeStepOutputs(raw json.RawMessage, prefix string) (map[string]*job.StepOutput, error) {
	if compute.NonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if jobdecode.JSONKind(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, core.FieldErrorf(prefix+"outputs", "must be a mapping of output names to {type, mode} mappings or to ${{parent.outputs.<name>}}")
	}
	out := make(map[string]*job.StepOutput, len(m))
	for _, name := range core.SortedKeys(m) {
		field := prefix + job.JobKeyPath("outputs", name)
		v := m[name]
		switch jobdecode.JSONKind(v) {
		case 0, 'n':
			out[name] = &job.StepOutput{}
			continue
		case '"':
			s, _ := jobdecode.JobString(v, field)
			if !job.IsPipelineBinding(s) {
				return nil, core.FieldErrorf(field, "%q must be ${{parent.outputs.<name>}} or a mapping with type and mode", core.Short(s))
			}
			out[name] = &job.StepOutput{Bind: strings.TrimSpace(s)}
			continue
		case '{':
		default:
			return nil, core.FieldErrorf(field, "must be ${{parent.outputs.<name>}} or a mapping with type and mode, got %s", compute.ShortJSON(v))
		}
		o, err := jobdecode.CheckedMapping(v, field, stepOutputKeys)
		if err != nil {
			return nil, err
		}
		so := &job.StepOutput{}
		if so.Type, err = jobdecode.JobString(o["type"], field+".type"); err != nil {
			return nil, err
		}
		if so.Mode, err = jobdecode.JobString(o["mode"], field+".mode"); err != nil {
			return nil, err
		}
		p, err := jobdecode.JobString(o["path"], field+".path")
		if err != nil {
			return nil, err
		}
		// A binding to a pipeline output, or where the output is kept.
		if job.IsPipelineBinding(p) && jobio.PathKind(p) == jobio.Local {
			so.Bind = strings.TrimSpace(p)
		} else {
			so.Path = p
		}
		if so.Name, err = jobdecode.JobString(o["name"], field+".name"); err != nil {
			return nil, err
		}
		if so.Version, err = jobio.Text(o["version"], field+".version"); err != nil {
			return nil, err
		}
		out[name] = so
	}
	return out, nil
}

// checkStepType puts a step's type in its canonical spelling (command,
// the only kind of step) or refuses it: with the sentence for a job type
// Shoal does not run (automl, spark), or saying what a step is.
func checkStepType(prefix string, step *job.PipelineStep) error {
	switch t := strings.ToLower(strings.TrimSpace(step.Type)); {
	case t == "" || t == job.JobTypeCommand:
		step.Type = job.JobTypeCommand
		if step.Sweep != nil {
			return core.FieldErrorf(prefix+"type", "is command, but the step has a sweep: write type: sweep")
		}
		return nil
	case t == job.JobTypeSweep:
		step.Type = job.JobTypeSweep
		return nil
	case t == job.JobTypeParallel:
		step.Type = job.JobTypeParallel
		return nil
	case job.NotRunHere(t) != "":
		return job.UnsupportedJobType(prefix+"type", step.Type)
	}
	return core.FieldErrorf(prefix+"type", "%q steps are not supported: a step is a command (type: command), inline or from a command component, a sweep (type: sweep), a parallel step (type: parallel) or a pipeline component (type: pipeline)", core.Short(step.Type))
}
