package job

import (
	"encoding/json"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/interactive"
	"github.com/shoal-ml/shoal/domain/notify"
)

// JobTypePipeline is a pipeline job: steps (child command jobs) that pass
// data through their outputs.
const JobTypePipeline = "pipeline"

// PipelineSpec is an Azure ML pipeline job as written in YAML (`type:
// pipeline`, CLI v2's pipelineJob schema), with the snake_case keys.
// Decode it with DecodePipelineSpec and check it with
// NormalizePipelineSpec; steps that name a registered component are
// completed at submit by ResolvePipelineComponents.
type PipelineSpec struct {
	Name           string            `json:"name"`
	Type           string            `json:"type"`
	DisplayName    string            `json:"display_name,omitempty"`
	ExperimentName string            `json:"experiment_name,omitempty"`
	Description    string            `json:"description,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
	// Compute is the top-level compute, a default for steps that name
	// none, as settings.default_compute is (which wins when both are
	// given).
	Compute  string                   `json:"compute,omitempty"`
	Inputs   map[string]*JobInput     `json:"inputs,omitempty"`
	Outputs  map[string]*JobOutput    `json:"outputs,omitempty"`
	Settings PipelineSettings         `json:"settings"`
	Jobs     map[string]*PipelineStep `json:"jobs"`
	// Identity is the steps' identity where they name none.
	Identity *JobIdentity `json:"identity,omitempty"`
	// NotificationSetting mails when the pipeline ends (not its steps).
	NotificationSetting *notify.NotificationSetting `json:"notification_setting,omitempty"`
	// IgnoredInputs are the places (jobs.<step>.inputs.<name>) of inputs
	// given to a component step whose component does not declare them:
	// Azure's SDK drops those without a word (it builds a node's inputs
	// from its component's definition), so Shoal accepts and drops them
	// too, but says so (pipelinejob.IgnoredWarnings). Read only.
	IgnoredInputs []string `json:"ignored_inputs,omitempty"`
}

// PipelineSettings are a pipeline's settings.
type PipelineSettings struct {
	// DefaultCompute is the compute of steps that name none.
	DefaultCompute string `json:"default_compute,omitempty"`
	// ContinueOnStepFailure lets the steps that do not depend on a failed
	// step run on; without it the first failure stops the pipeline.
	ContinueOnStepFailure bool `json:"continue_on_step_failure,omitempty"`
	// DefaultDatastore is recorded and ignored: Shoal keeps every output
	// in the workspace's file store.
	DefaultDatastore string `json:"default_datastore,omitempty"`
	// ForceRerun is recorded and ignored: Shoal always runs every step
	// (it never reuses an earlier run's outputs).
	ForceRerun *bool `json:"force_rerun,omitempty"`
	// Ignored are the settings Shoal does not know (Azure accepts any
	// key under settings, a misspelt one too), kept as written so that
	// show returns them; the job's events say they were ignored.
	Ignored map[string]json.RawMessage `json:"ignored,omitempty"`
}

// PipelineStep is one of a pipeline's jobs: an inline command step or a
// step running a command component, with its inputs and outputs bound.
type PipelineStep struct {
	// Type is command or sweep (steps of type pipeline are expanded into
	// their pipeline's steps when decoded).
	Type        string            `json:"type"`
	DisplayName string            `json:"display_name,omitempty"`
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	// Component is what the step runs. An inline command step (command,
	// code, environment written on the step) becomes an anonymous
	// component whose inputs and outputs are the step's; a component
	// reference is filled in at submit (ResolvePipelineComponents); nil
	// until then.
	Component *Component `json:"component,omitempty"`
	// ComponentRef is the registered component the step names
	// (azureml:<name>:<version> or azureml:<name>@latest), as written.
	ComponentRef string `json:"component_ref,omitempty"`
	// Inputs bind the component's inputs: literals, data paths, or
	// ${{parent.inputs.x}} and ${{parent.jobs.<step>.outputs.y}}.
	Inputs map[string]*StepInput `json:"inputs,omitempty"`
	// Outputs configure the component's outputs, or bind one to a
	// pipeline output (${{parent.outputs.y}}).
	Outputs map[string]*StepOutput `json:"outputs,omitempty"`
	// Compute is the step's compute; empty takes the pipeline's default.
	Compute string `json:"compute,omitempty"`
	// EnvironmentVariables are added to (and win over) the component's.
	EnvironmentVariables map[string]string `json:"environment_variables,omitempty"`
	// Resources, Distribution and Limits win over the component's.
	Resources    *JobResources `json:"resources,omitempty"`
	Distribution *Distribution `json:"distribution,omitempty"`
	Limits       *JobLimits    `json:"limits,omitempty"`
	// Identity wins over the pipeline's; Services are the step's
	// interactive applications (JobSpec's).
	Identity *JobIdentity                    `json:"identity,omitempty"`
	Services map[string]*interactive.Service `json:"services,omitempty"`
	// Sweep is set on a sweep step (type: sweep): it runs as a sweep job
	// whose trial is Component, and its outputs are its best trial's.
	Sweep *SweepStep `json:"sweep,omitempty"`
	// From is where a step that came from a pipeline component is
	// written in the submitted document (jobs.a.component.jobs.b), so
	// that an error about it names that place.
	From string `json:"from,omitempty"`
}

// StepInput is what a step binds to one input: a literal (Value), a data
// path (Path, with Type and Mode), or a binding (Bind: the whole
// ${{parent...}} expression), which may come with a Mode.
type StepInput struct {
	Value any    `json:"value,omitempty"`
	Type  string `json:"type,omitempty"`
	Path  string `json:"path,omitempty"`
	Mode  string `json:"mode,omitempty"`
	// Bind is ${{parent.inputs.x}} or ${{parent.jobs.<step>.outputs.y}}.
	Bind string `json:"bind,omitempty"`
}

// StepOutput configures a step's output: its type and mode, or a binding
// to a pipeline output (${{parent.outputs.y}}), which the output then
// is.
type StepOutput struct {
	Type string `json:"type,omitempty"`
	Mode string `json:"mode,omitempty"`
	// Bind is ${{parent.outputs.y}}.
	Bind string `json:"bind,omitempty"`
	// Path is where the step's output is kept (a datastore URI, as a
	// job output's path), Name and Version what it is registered as.
	Path    string `json:"path,omitempty"`
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

// Kinds of a pipeline binding.
const (
	// BindParentInput is ${{parent.inputs.x}}: a pipeline input.
	BindParentInput = "parent_input"
	// BindStepOutput is ${{parent.jobs.<step>.outputs.y}}: another
	// step's output.
	BindStepOutput = "step_output"
	// BindParentOutput is ${{parent.outputs.y}}: a pipeline output, which
	// a step output is bound to.
	BindParentOutput = "parent_output"
)

// PipelineBinding is a parsed ${{parent...}} expression.
type PipelineBinding struct {
	Kind string
	// Step names the step of a BindStepOutput.
	Step string
	// Name is the input or output named.
	Name string
}

// String writes the binding back as the expression it was parsed from.
func (b PipelineBinding) String() string {
	switch b.Kind {
	case BindParentInput:
		return "${{parent.inputs." + b.Name + "}}"
	case BindStepOutput:
		return "${{parent.jobs." + b.Step + ".outputs." + b.Name + "}}"
	case BindParentOutput:
		return "${{parent.outputs." + b.Name + "}}"
	}
	return ""
}

// Path is where the binding points in the document: inputs.x,
// jobs.<step>.outputs.y or outputs.y.
func (b PipelineBinding) Path() string {
	switch b.Kind {
	case BindParentInput:
		return "inputs." + b.Name
	case BindStepOutput:
		return "jobs." + b.Step + ".outputs." + b.Name
	case BindParentOutput:
		return "outputs." + b.Name
	}
	return ""
}

// pipelineBindRE matches a value that is one ${{...}} expression.
var pipelineBindRE = core.LazyRegexp(`^\s*\$\{\{\s*(.*?)\s*\}\}\s*$`)

// IsPipelineBinding reports whether a value is written as a binding
// (${{...}}), well-formed or not.
func IsPipelineBinding(s string) bool {
	return strings.Contains(s, "${{")
}

// ParsePipelineBinding parses a binding written at field (for the error):
// ${{parent.inputs.x}}, ${{parent.jobs.<step>.outputs.y}} or
// ${{parent.outputs.y}}. A binding must be the whole value.
func ParsePipelineBinding(field, s string) (PipelineBinding, error) {
	const forms = "${{parent.inputs.<name>}}, ${{parent.jobs.<step>.outputs.<name>}} or ${{parent.outputs.<name>}}"
	m := pipelineBindRE.FindStringSubmatch(s)
	if m == nil || strings.Contains(m[1], "${{") || strings.Contains(m[1], "}}") {
		return PipelineBinding{}, core.FieldErrorf(field, "%q must be a whole binding: %s (a binding cannot be part of a longer text)", core.Short(s), forms)
	}
	parts := strings.Split(m[1], ".")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	var b PipelineBinding
	switch {
	case len(parts) == 3 && parts[0] == "parent" && parts[1] == "inputs":
		b = PipelineBinding{Kind: BindParentInput, Name: parts[2]}
	case len(parts) == 3 && parts[0] == "parent" && parts[1] == "outputs":
		b = PipelineBinding{Kind: BindParentOutput, Name: parts[2]}
	case len(parts) == 5 && parts[0] == "parent" && parts[1] == "jobs" && parts[3] == "outputs":
		b = PipelineBinding{Kind: BindStepOutput, Step: parts[2], Name: parts[4]}
		if !JobNameRE.MatchString(b.Step) || len(b.Step) > MaxJobNameLength {
			return b, core.FieldErrorf(field, "%q names step %q, which is not a step name", core.Short(s), core.Short(b.Step))
		}
	case parts[0] == "inputs" || parts[0] == "outputs":
		return b, core.FieldErrorf(field, "%q refers to the step's own %s; in a step's bindings, write %s (${{inputs.x}} is for the command)", core.Short(s), parts[0], forms)
	default:
		return b, core.FieldErrorf(field, "%q is not a binding: write %s", core.Short(s), forms)
	}
	if !JobIONameRE.MatchString(b.Name) || len(b.Name) > MaxJobNameLength {
		return b, core.FieldErrorf(field, "%q names %q, which is not an input or output name", core.Short(s), core.Short(b.Name))
	}
	return b, nil
}
