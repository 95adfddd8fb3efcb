package shoal

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// pipelineKeys are the keys of a pipeline job document that a user writes.
var pipelineKeys = keySchema{
	"$schema": nil, "name": nil, "type": nil, "display_name": nil, "experiment_name": nil,
	"description": nil, "tags": nil, "compute": nil, "inputs": nil, "outputs": nil, "jobs": nil,
	"settings": keySchema{"default_compute": nil, "continue_on_step_failure": nil, "default_datastore": nil, "force_rerun": nil},
}

// stepKeys are the keys of a pipeline step. command, code and environment
// make an inline command step; component names what a component step
// runs.
var stepKeys = keySchema{
	"type": nil, "component": nil, "inputs": nil, "outputs": nil, "compute": nil,
	"environment_variables": nil, "display_name": nil, "description": nil, "tags": nil,
	"command": nil, "code": nil, "environment": nil,
	"resources":    keySchema{"instance_count": nil, "instance_type": nil, "shm_size": nil, "properties": nil},
	"distribution": keySchema{"type": nil, "process_count_per_instance": nil},
	"limits":       keySchema{"timeout": nil},
}

// stepJobKeys are the step keys decoded as a command job's.
var stepJobKeys = []string{"command", "code", "environment", "environment_variables", "compute",
	"resources", "distribution", "limits", "display_name", "description", "tags"}

// stepOutputKeys are the keys of a step's output mapping.
var stepOutputKeys = keySchema{"type": nil, "mode": nil, "path": nil}

// DecodeJobType returns the type of a job document, lower-cased, or ""
// when it has none (a command job): callers decode a command job with
// DecodeJobSpec and a pipeline with DecodePipelineSpec.
func DecodeJobType(data []byte) (string, error) {
	d, err := unmarshalJobDocument(bytes.TrimSpace(data))
	if err != nil {
		return "", err
	}
	t, err := jobString(d["type"], "type")
	return strings.ToLower(strings.TrimSpace(t)), err
}

// DecodePipelineSpec decodes a pipeline job document (JSON with the
// snake_case YAML keys, as the CLI sends it: local component files
// inlined, local paths uploaded). Unknown keys and values of the wrong
// shape are EINVALID errors naming their path (jobs.train.inputs.data);
// the rules across steps (bindings, types, cycles) are
// NormalizePipelineSpec's. Read-only keys of show output are ignored.
func DecodePipelineSpec(data []byte) (*PipelineSpec, error) {
	d, err := parseJobDocument(data)
	if err != nil {
		return nil, err
	}
	spec := &PipelineSpec{}
	if spec.Type, err = d.requireType(JobTypePipeline); err != nil {
		return nil, err
	}
	if err := d.checkKeys("pipeline job", pipelineKeys); err != nil {
		return nil, err
	}
	fields := append(jobNameFields(&spec.Name, &spec.DisplayName, &spec.ExperimentName, &spec.Description),
		stringField("compute", &spec.Compute), tagsField(&spec.Tags),
		valueField("inputs", &spec.Inputs, decodePipelineInputs), valueField("outputs", &spec.Outputs, decodeJobOutputs),
		jobField{"settings", func(raw json.RawMessage, _ string) error { return decodePipelineSettings(raw, &spec.Settings) }},
		valueField("jobs", &spec.Jobs, decodePipelineSteps),
	)
	if err := d.decodeFields("", fields...); err != nil {
		return nil, err
	}
	return spec, nil
}

// decodePipelineInputs decodes a pipeline's inputs as a command job's,
// which bind nothing: a binding names another step's value, and the
// pipeline has no step above it.
func decodePipelineInputs(raw json.RawMessage) (map[string]*JobInput, error) {
	inputs, err := decodeJobInputs(raw)
	if err != nil {
		return nil, err
	}
	for _, name := range sortedKeys(inputs) {
		if in := inputs[name]; IsPipelineBinding(in.Path) || IsPipelineBinding(FormatInputValue(in.Value)) {
			return nil, FieldErrorf(jobKeyPath("inputs", name), "a pipeline input is a value or a path; bindings (${{...}}) belong in the steps' inputs")
		}
	}
	return inputs, nil
}

func decodePipelineSettings(raw json.RawMessage, s *PipelineSettings) error {
	m, err := decodeMapping(raw, "settings")
	if m == nil {
		return err
	}
	return m.decodeFields("settings.",
		stringField("default_compute", &s.DefaultCompute), stringField("default_datastore", &s.DefaultDatastore),
		boolField("continue_on_step_failure", func(v bool) { s.ContinueOnStepFailure = v }),
		boolField("force_rerun", func(v bool) { s.ForceRerun = &v }),
	)
}

// boolField decodes true or false into set; absent or null leaves it.
func boolField(key string, set func(bool)) jobField {
	return jobField{key, func(raw json.RawMessage, path string) error {
		if v := nonNull(raw); v != nil {
			var x bool
			if err := json.Unmarshal(v, &x); err != nil {
				return FieldErrorf(path, "must be true or false, got %s", shortJSON(v))
			}
			set(x)
		}
		return nil
	}}
}

// decodePipelineSteps decodes the steps, which are required.
func decodePipelineSteps(raw json.RawMessage) (map[string]*PipelineStep, error) {
	if nonNull(raw) == nil {
		return nil, FieldErrorf("jobs", "is required: a mapping of step names to steps (each a command, or a component with its inputs and outputs)")
	}
	var jobs map[string]json.RawMessage
	if jsonKind(raw) != '{' || json.Unmarshal(raw, &jobs) != nil {
		return nil, FieldErrorf("jobs", "must be a mapping of step names to steps, got %s", shortJSON(raw))
	}
	steps := make(map[string]*PipelineStep, len(jobs))
	for _, name := range sortedKeys(jobs) {
		prefix := jobKeyPath("jobs", name) + "."
		if err := ValidateJobName(name); err != nil {
			return nil, FieldErrorf(strings.TrimSuffix(prefix, "."), "%q is not a step name: 1 to %d letters, digits, '-' and '_', starting with a letter or a digit", jobShort(name), MaxJobNameLength)
		}
		step, err := decodePipelineStep(jobs[name], prefix)
		if err != nil {
			return nil, err
		}
		steps[name] = step
	}
	return steps, nil
}

// decodePipelineStep decodes one step; prefix is jobs.<name>.
func decodePipelineStep(raw json.RawMessage, prefix string) (*PipelineStep, error) {
	field := strings.TrimSuffix(prefix, ".")
	if jsonKind(raw) != '{' {
		return nil, FieldErrorf(field, "must be a step: a mapping with command (an inline command step) or component, and their inputs and outputs; got %s", shortJSON(raw))
	}
	obj, err := checkedMapping(raw, field, stepKeys)
	if err != nil {
		return nil, err
	}
	step := &PipelineStep{}
	if step.Type, err = jobString(obj["type"], prefix+"type"); err != nil {
		return nil, err
	}
	switch t := strings.ToLower(strings.TrimSpace(step.Type)); t {
	case "", JobTypeCommand:
		step.Type = JobTypeCommand
	default:
		return nil, FieldErrorf(prefix+"type", "%q steps are not supported: a step is a command (type: command), inline or from a command component", jobShort(step.Type))
	}
	// The command job keys, decoded as a command job's are.
	js, err := decodeAsCommandJob(obj.pick(func(k string) bool { return slices.Contains(stepJobKeys, k) }), prefix)
	if err != nil {
		return nil, err
	}
	step.DisplayName, step.Description, step.Tags = js.DisplayName, js.Description, js.Tags
	step.Compute, step.EnvironmentVariables = js.Compute, js.EnvironmentVariables
	step.Resources, step.Distribution, step.Limits = js.Resources, js.Distribution, js.Limits

	if step.Inputs, err = decodeStepInputs(obj["inputs"], prefix); err != nil {
		return nil, err
	}
	if step.Outputs, err = decodeStepOutputs(obj["outputs"], prefix); err != nil {
		return nil, err
	}
	inline := nonNull(obj["command"]) != nil
	switch c := nonNull(obj["component"]); {
	case c == nil && !inline:
		return nil, FieldErrorf(field, "needs command (an inline command step) or component (./file.yml, azureml:<name>:<version> or azureml:<name>@latest)")
	case c != nil && inline:
		return nil, FieldErrorf(prefix+"command", "a step with a component runs the component's command: give command or component, not both")
	case c != nil:
		for _, k := range []string{"code", "environment"} {
			if nonNull(obj[k]) != nil {
				return nil, FieldErrorf(prefix+k, "a step with a component takes its %s from the component; set it there", k)
			}
		}
		switch jsonKind(c) {
		case '"':
			ref, _ := jobString(c, prefix+"component")
			if strings.TrimSpace(ref) == "" {
				return nil, FieldErrorf(prefix+"component", "must not be blank")
			}
			step.ComponentRef = strings.TrimSpace(ref)
		case '{':
			if step.Component, err = decodeComponentRaw(c, prefix+"component."); err != nil {
				return nil, err
			}
		default:
			return nil, FieldErrorf(prefix+"component", "must be a component reference (azureml:<name>:<version>, azureml:<name>@latest, or a local ./file.yml that the CLI inlines) or a component mapping, got %s", shortJSON(c))
		}
	default:
		// An inline command step: an anonymous component whose inputs and
		// outputs are the ones the step binds.
		step.Component = &Component{Type: ComponentTypeCommand, Command: js.Command, Code: js.Code, Environment: js.Environment}
		for name := range step.Inputs {
			if step.Component.Inputs == nil {
				step.Component.Inputs = map[string]*ComponentInput{}
			}
			step.Component.Inputs[name] = &ComponentInput{}
		}
		for name, o := range step.Outputs {
			if step.Component.Outputs == nil {
				step.Component.Outputs = map[string]*ComponentOutput{}
			}
			step.Component.Outputs[name] = &ComponentOutput{Type: o.Type}
		}
	}
	return step, nil
}

func decodeStepInputs(raw json.RawMessage, prefix string) (map[string]*StepInput, error) {
	if nonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if jsonKind(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, FieldErrorf(prefix+"inputs", "must be a mapping of input names to values, paths or bindings (${{parent.inputs.x}}, ${{parent.jobs.<step>.outputs.y}})")
	}
	out := make(map[string]*StepInput, len(m))
	for _, name := range sortedKeys(m) {
		field := prefix + jobKeyPath("inputs", name)
		v := m[name]
		if jsonKind(v) == '"' {
			s, err := jobString(v, field)
			if err != nil {
				return nil, err
			}
			if IsPipelineBinding(s) {
				out[name] = &StepInput{Bind: strings.TrimSpace(s)}
				continue
			}
		}
		if jsonKind(v) == '{' {
			var o map[string]json.RawMessage
			if json.Unmarshal(v, &o) == nil {
				if p, _ := jobString(o["path"], ""); IsPipelineBinding(p) {
					if err := checkKeys(v, field, keySchema{"type": nil, "path": nil, "mode": nil}); err != nil {
						return nil, err
					}
					in := &StepInput{Bind: strings.TrimSpace(p)}
					var err error
					if in.Type, err = jobString(o["type"], field+".type"); err != nil {
						return nil, err
					}
					if in.Mode, err = jobString(o["mode"], field+".mode"); err != nil {
						return nil, err
					}
					out[name] = in
					continue
				}
			}
		}
		in, err := decodeJobInput(field, v)
		if err != nil {
			return nil, err
		}
		out[name] = &StepInput{Value: in.Value, Type: in.Type, Path: in.Path, Mode: in.Mode}
	}
	return out, nil
}

func decodeStepOutputs(raw json.RawMessage, prefix string) (map[string]*StepOutput, error) {
	if nonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if jsonKind(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, FieldErrorf(prefix+"outputs", "must be a mapping of output names to {type, mode} mappings or to ${{parent.outputs.<name>}}")
	}
	out := make(map[string]*StepOutput, len(m))
	for _, name := range sortedKeys(m) {
		field := prefix + jobKeyPath("outputs", name)
		v := m[name]
		switch jsonKind(v) {
		case 0, 'n':
			out[name] = &StepOutput{}
			continue
		case '"':
			s, _ := jobString(v, field)
			if !IsPipelineBinding(s) {
				return nil, FieldErrorf(field, "%q must be ${{parent.outputs.<name>}} or a mapping with type and mode", jobShort(s))
			}
			out[name] = &StepOutput{Bind: strings.TrimSpace(s)}
			continue
		case '{':
		default:
			return nil, FieldErrorf(field, "must be ${{parent.outputs.<name>}} or a mapping with type and mode, got %s", shortJSON(v))
		}
		o, err := checkedMapping(v, field, stepOutputKeys)
		if err != nil {
			return nil, err
		}
		so := &StepOutput{}
		if so.Type, err = jobString(o["type"], field+".type"); err != nil {
			return nil, err
		}
		if so.Mode, err = jobString(o["mode"], field+".mode"); err != nil {
			return nil, err
		}
		p, err := jobString(o["path"], field+".path")
		if err != nil {
			return nil, err
		}
		if p != "" && !IsPipelineBinding(p) {
			return nil, FieldErrorf(field+".path", "a step output's path is chosen by Shoal; bind it to a pipeline output with ${{parent.outputs.<name>}} instead of %q", jobShort(p))
		}
		so.Bind = strings.TrimSpace(p)
		out[name] = so
	}
	return out, nil
}
