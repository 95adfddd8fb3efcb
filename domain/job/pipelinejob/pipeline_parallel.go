package pipelinejob

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobdecode"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/domain/job/paralleljob"
)

// A parallel step (type: parallel) runs Azure's parallel job: its
// input_data is split into mini-batches that its nodes share, each
// handed to the entry script's run(mini_batch) by Shoal's driver. It is
// one child job of the pipeline, a command job whose command is the
// driver and whose Parallel carries the settings (Resolve).

// parallelStepKeys are the keys of a parallel step: a step's, and the
// parallel settings (paralleljob.SettingKeys) of an inline one.
var parallelStepKeys = func() compute.KeySchema {
	k := compute.KeySchema{
		"type": nil, "component": nil, "inputs": nil, "outputs": nil, "compute": nil,
		"environment_variables": nil, "display_name": nil, "description": nil, "tags": nil, "identity": nil,
		"resources": compute.KeySchema{"instance_count": nil, "instance_type": nil, "shm_size": nil, "properties": nil},
	}
	maps.Copy(k, paralleljob.SettingKeys)
	return k
}()

// parallelStepJobKeys are the keys of a parallel step decoded as a
// command job's.
var parallelStepJobKeys = []string{"compute", "resources", "environment_variables", "display_name", "description", "tags", "identity"}

// decodeParallelStep decodes a parallel step; prefix is jobs.<name>.
// Written inline (task and the settings on the step) it is an anonymous
// parallel component whose inputs and outputs are the ones the step
// binds; with component: it runs that parallel component, whose
// settings it takes.
func decodeParallelStep(raw json.RawMessage, prefix string) (*job.PipelineStep, error) {
	field := strings.TrimSuffix(prefix, ".")
	obj, err := jobdecode.CheckedMapping(raw, field, parallelStepKeys)
	if err != nil {
		return nil, err
	}
	part := obj.Pick(func(k string) bool { return slices.Contains(parallelStepJobKeys, k) })
	part["command"] = json.RawMessage(`"true"`)
	js, err := job.DecodeAsCommandJob(part, prefix)
	if err != nil {
		return nil, err
	}
	step := &job.PipelineStep{Type: job.JobTypeParallel, DisplayName: js.DisplayName, Description: js.Description, Tags: js.Tags,
		Compute: js.Compute, EnvironmentVariables: js.EnvironmentVariables, Resources: js.Resources, Identity: js.Identity}
	if step.Inputs, err = decodeStepInputs(obj["inputs"], prefix); err != nil {
		return nil, err
	}
	if step.Outputs, err = decodeStepOutputs(obj["outputs"], prefix); err != nil {
		return nil, err
	}
	c := compute.NonNull(obj["component"])
	if c != nil {
		for _, k := range core.SortedKeys(paralleljob.SettingKeys) {
			if compute.NonNull(obj[k]) != nil {
				return nil, core.FieldErrorf(prefix+k, "a step with a component takes its parallel settings from the component; set %s there", k)
			}
		}
	}
	if c != nil {
		if err := decodeStepComponent(c, prefix, step, "a parallel component (./score.yml, azureml:<name>:<version>)"); err != nil {
			return nil, err
		}
		return step, nil
	}
	p, task, err := paralleljob.DecodeSettings(obj, prefix)
	if err != nil {
		return nil, err
	}
	paralleljob.NormalizeSettings(p)
	step.Component = &job.Component{Type: job.ComponentTypeParallel, Command: job.ParallelCommand(p.ProgramArguments),
		Code: task.Code, CodeAsset: task.CodeAsset, Environment: task.Environment, Parallel: p}
	inlineComponentIO(step)
	return step, nil
}

// checkParallelStep checks that a step's type and its component's agree
// (a parallel step runs a parallel component, and only it does) and a
// parallel component's settings against the inputs and outputs, typed
// by what the step binds where the component does not say. inline says
// the component is the step's own (its errors name jobs.<step>.<key>).
func checkParallelStep(prefix string, step *job.PipelineStep, inline bool) error {
	c := step.Component
	if c == nil {
		return nil
	}
	switch parallel := c.Type == job.ComponentTypeParallel; {
	case step.Type == job.JobTypeParallel && !parallel:
		return core.FieldErrorf(prefix+"component", "is a %s component: a parallel step (type: parallel) runs a parallel component", c.Type)
	case step.Type != job.JobTypeParallel && parallel:
		return core.FieldErrorf(prefix+"type", "is %s, but the step's component is a parallel component: write type: parallel", step.Type)
	case !parallel:
		return nil
	}
	typed := *c
	typed.Inputs = map[string]*job.ComponentInput{}
	for name, in := range c.Inputs {
		ci := *in
		if si := step.Inputs[name]; ci.Type == "" && si != nil {
			switch {
			case si.Value != nil:
				ci.Type = job.InputTypeString
			case si.Bind == "" && si.Path != "":
				ci.Type = firstNonEmpty(si.Type, jobio.TypeURIFolder)
			default:
				ci.Type = si.Type
			}
		}
		typed.Inputs[name] = &ci
	}
	if err := paralleljob.CheckComponent(&typed); err != nil {
		if inline {
			return jobdecode.PrefixFieldError(prefix, err)
		}
		return jobdecode.PrefixFieldError(prefix+"component.", err)
	}
	return nil
}

// resolveParallel gives a parallel step's job its settings: the
// component's, with the program arguments as the command has them (its
// optional $[[...]] blocks decided) and, for rows appended to a
// uri_folder output, the file they go to.
func resolveParallel(js *job.JobSpec, c *job.Component) error {
	b, err := json.Marshal(c.Parallel)
	if err != nil {
		return err
	}
	p := &job.ParallelSpec{}
	if err := json.Unmarshal(b, p); err != nil {
		return err
	}
	p.ProgramArguments = strings.TrimSpace(strings.TrimPrefix(js.Command, job.ParallelCommand("")))
	js.Command = job.ParallelCommand(p.ProgramArguments)
	if name, ok := paralleljob.RowsOutputName(p); ok && p.AppendRowFile == "" {
		if o := js.Outputs[name]; o != nil && (o.Type == "" || o.Type == jobio.TypeURIFolder) {
			p.AppendRowFile = paralleljob.DefaultAppendRowFile
		}
	}
	// A table's mini_batch_size written as a bare number is bytes, as
	// Azure reads it (azure-ai-ml sends "10kb" as 10240).
	if name, ok := paralleljob.InputName(p); ok && js.Inputs[name] != nil && js.Inputs[name].Type == jobio.TypeMLTable && isDigits(p.MiniBatchSize) {
		p.MiniBatchSize += "b"
	}
	js.Parallel = p
	return nil
}

// isDigits reports whether s is a whole number written in digits.
func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
