package job

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/jobio"
)

// ComponentTypeCommand is the one component type Shoal runs: a command
// component, the building block of a pipeline's steps.
const ComponentTypeCommand = "command"

// Component is a command component (`az ml component create`, Azure's
// commandComponent schema): a command with declared, typed inputs and
// outputs, its code and environment. Registered components are versioned
// like environments (name, version, archived, latest); a pipeline step
// names one as azureml:<name>:<version> or azureml:<name>@latest, or
// carries one inline (the CLI inlines `component: ./train.yml`).
type Component struct {
	Workspace   string            `json:"-"`
	Name        string            `json:"name,omitempty"`
	Version     string            `json:"version,omitempty"`
	Type        string            `json:"type"`
	DisplayName string            `json:"display_name,omitempty"`
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	// IsDeterministic is recorded as written; Shoal never reuses a
	// step's earlier outputs, so every step runs.
	IsDeterministic *bool                       `json:"is_deterministic,omitempty"`
	Inputs          map[string]*ComponentInput  `json:"inputs,omitempty"`
	Outputs         map[string]*ComponentOutput `json:"outputs,omitempty"`
	// Code is the code folder: a local path as written, an artifact ID
	// (sha256:<hex>) once the CLI uploaded it.
	Code string `json:"code,omitempty"`
	// CodeAsset is the code version Code was packed from (JobSpec's).
	CodeAsset string `json:"code_asset,omitempty"`
	// Environment is a reference (azureml:<name>:<version>) or an inline
	// mapping, as a command job's.
	Environment          any               `json:"environment,omitempty"`
	Command              string            `json:"command"`
	EnvironmentVariables map[string]string `json:"environment_variables,omitempty"`
	Resources            *JobResources     `json:"resources,omitempty"`
	Distribution         *Distribution     `json:"distribution,omitempty"`
	// Parallel is a parallel component's settings (type parallel,
	// package paralleljob): its Command is then ParallelCommand of their
	// program arguments. nil for a command component.
	Parallel *ParallelSpec `json:"parallel,omitempty"`
	// Archived versions are left out of lists and of @latest; a pipeline
	// may still name one by its version.
	Archived  bool      `json:"archived,omitempty"`
	CreatedOn time.Time `json:"created_on,omitzero"`
	CreatedBy string    `json:"created_by,omitempty"`
}

// ComponentInput is a component's declared input. An input that is
// neither optional nor has a default must be bound by every step that
// uses the component.
type ComponentInput struct {
	// Type is one of jobio.PathTypes or jobio.LiteralTypes;
	// empty only on the inputs Shoal declares for an inline command step,
	// which take the type of what is bound.
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
	// Default is a literal input's default value, of its type.
	Default  any  `json:"default,omitempty"`
	Optional bool `json:"optional,omitempty"`
	// Enum lists a string input's allowed values; empty allows any.
	Enum []string `json:"enum,omitempty"`
	// Min and Max bound an integer or number input.
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
}

// ComponentOutput is a component's declared output.
type ComponentOutput struct {
	// Type is one of jobio.PathTypes.
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	Mode        string `json:"mode,omitempty"`
}

// Limits of a component's fields.
const (
	MaxComponentNameLength    = 255
	MaxComponentVersionLength = 64
)

// ValidateComponentName checks a registered component's name: 1 to 255
// letters, digits, '-', '_' and '.', starting with a letter or digit.
func ValidateComponentName(name string) error {
	if name == "" {
		return core.FieldErrorf("name", "is required")
	}
	if len(name) > MaxComponentNameLength || !asset.EnvironmentNameRE.MatchString(name) {
		return core.FieldErrorf("name", "%q must be 1 to %d letters, digits, '-', '_' and '.', starting with a letter or digit", core.Short(name), MaxComponentNameLength)
	}
	return nil
}

// ValidateComponentVersion checks a version: 1 to 64 letters, digits,
// '-', '_' and '.', starting with a letter or digit.
func ValidateComponentVersion(v string) error {
	if len(v) > MaxComponentVersionLength || !asset.EnvironmentVersionRE.MatchString(v) {
		return core.FieldErrorf("version", "%q must be 1 to %d letters, digits, '-', '_' and '.', starting with a letter or digit (e.g. 1, 2, 1.0.3)", core.Short(v), MaxComponentVersionLength)
	}
	return nil
}

// NormalizeComponent checks a command component and puts its
// enumerations in their canonical spelling: type command, declared
// inputs and outputs of supported types with defaults of their type, a
// command whose ${{inputs.x}} / ${{outputs.y}} name declared ones and
// whose $[[...]] optional blocks are closed, and the shape of code,
// environment, environment variables, resources and distribution.
// registered says the component is to be registered: it then needs a
// name (the version may be empty: the service gives the next one).
func NormalizeComponent(c *Component, registered bool) error {
	return NormalizeComponentSpec(c, registered, false)
}

// NormalizeComponentSpec is NormalizeComponent; inline says c is the
// component Shoal made of an inline command step, whose inputs have no
// declared type (they take the type of what the step binds).
func NormalizeComponentSpec(c *Component, registered, inline bool) error {
	if c == nil {
		return core.Errorf(core.EINVALID, "the component document is empty")
	}
	c.Name, c.Version = strings.TrimSpace(c.Name), strings.TrimSpace(c.Version)
	if registered || c.Name != "" {
		if err := ValidateComponentName(c.Name); err != nil {
			return err
		}
	}
	if c.Version != "" {
		if err := ValidateComponentVersion(c.Version); err != nil {
			return err
		}
	}
	switch t := strings.ToLower(strings.TrimSpace(c.Type)); t {
	case "", ComponentTypeCommand:
		c.Type = ComponentTypeCommand
		if c.Parallel != nil {
			return core.FieldErrorf("type", "is command, but the component has parallel settings: write type: parallel")
		}
	case ComponentTypeParallel:
		// Its settings are package paralleljob's to check
		// (CheckComponent); here the rules every component follows.
		c.Type = ComponentTypeParallel
		if c.Parallel == nil {
			return core.FieldErrorf("task", "is required on a parallel component: {type: run_function, code, entry_script, environment, program_arguments}")
		}
	default:
		return core.FieldErrorf("type", "%q components are not supported: components are command (type: command) and parallel (type: parallel)", core.Short(c.Type))
	}
	if n := utf8.RuneCountInString(c.DisplayName); n > MaxJobDisplayNameLength {
		return core.FieldErrorf("display_name", "must be at most %d characters long (it has %d)", MaxJobDisplayNameLength, n)
	}
	if err := core.NoControl("display_name", c.DisplayName); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(c.Description); n > core.MaxDescriptionLength {
		return core.FieldErrorf("description", "must be at most %d characters long (it has %d)", core.MaxDescriptionLength, n)
	}
	if err := core.ValidateTags(c.Tags); err != nil {
		return err
	}
	if err := normalizeComponentIO(c, inline); err != nil {
		return err
	}
	if strings.TrimSpace(c.Command) == "" {
		return core.FieldErrorf("command", "is required: the shell command to run, e.g. python train.py --data ${{inputs.data}}")
	}
	if strings.ContainsRune(c.Command, 0) {
		return core.FieldErrorf("command", "must not contain NUL characters")
	}
	if err := checkComponentCommand(c); err != nil {
		return err
	}
	if c.Code != "" {
		if err := core.ValidatePath("code", c.Code); err != nil {
			return err
		}
	}
	if err := checkCodeAsset(c.Code, c.CodeAsset); err != nil {
		return err
	}
	// The rules a command job's environment, variables, resources and
	// distribution follow, checked on a job that carries them.
	probe := &JobSpec{Command: "true", Compute: "probe", Environment: c.Environment,
		EnvironmentVariables: c.EnvironmentVariables, Resources: c.Resources, Distribution: c.Distribution}
	if err := NormalizeJobSpec(probe); err != nil {
		return err
	}
	c.Environment = probe.Environment
	return nil
}

func normalizeComponentInput(name string, in *ComponentInput, inline bool) error {
	if err := ValidateJobIOName("inputs", name); err != nil {
		return err
	}
	field := JobKeyPath("inputs", name)
	if in == nil {
		return core.FieldErrorf(field, "has no declaration: give a mapping with type (uri_folder, uri_file, string, integer, number or boolean)")
	}
	t := strings.ToLower(strings.TrimSpace(in.Type))
	switch {
	case jobio.IsPathType(t):
		if in.Default != nil {
			return core.FieldErrorf(field+".default", "is not allowed for a %s input: a step binds its path", t)
		}
		if len(in.Enum) > 0 || in.Min != nil || in.Max != nil {
			return core.FieldErrorf(field, "enum, min and max apply to literal inputs, not to a %s input", t)
		}
	case jobio.IsLiteralType(t):
	case t == "":
		if inline {
			return nil
		}
		return core.FieldErrorf(field+".type", "is required: %s, %s", strings.Join(jobio.PathTypes, ", "), strings.Join(jobio.LiteralTypes, ", "))
	default:
		return core.FieldErrorf(field+".type", "input type %q is not supported; supported: %s, %s", core.Short(in.Type), strings.Join(jobio.PathTypes, ", "), strings.Join(jobio.LiteralTypes, ", "))
	}
	in.Type = t
	if len(in.Enum) > 0 && t != InputTypeString {
		return core.FieldErrorf(field+".enum", "applies to string inputs only")
	}
	if (in.Min != nil || in.Max != nil) && t != InputTypeInteger && t != InputTypeNumber {
		return core.FieldErrorf(field+".min", "min and max apply to integer and number inputs only")
	}
	if in.Min != nil && in.Max != nil && *in.Min > *in.Max {
		return core.FieldErrorf(field+".min", "%v is more than max %v", *in.Min, *in.Max)
	}
	if in.Default != nil {
		v, err := CheckComponentLiteral(field+".default", in, in.Default)
		if err != nil {
			return err
		}
		in.Default = v
	}
	return nil
}

// CheckComponentLiteral converts a literal value bound to (or default
// of) a declared input to its type and checks its enum and bounds.
func CheckComponentLiteral(field string, in *ComponentInput, v any) (any, error) {
	out, err := ConvertJobLiteral(field, in.Type, v)
	if err != nil {
		return nil, err
	}
	if s, ok := out.(string); ok {
		if strings.ContainsRune(s, 0) {
			return nil, core.FieldErrorf(field, "must not contain NUL characters")
		}
		if len(in.Enum) > 0 && !JobContains(in.Enum, s) {
			return nil, core.FieldErrorf(field, "%q is not one of the allowed values: %s", core.Short(s), strings.Join(in.Enum, ", "))
		}
	}
	if in.Min != nil || in.Max != nil {
		f, err := strconv.ParseFloat(FormatInputValue(out), 64)
		if err != nil {
			return nil, core.FieldErrorf(field, "must be a number, got %s", shortValue(out))
		}
		if in.Min != nil && f < *in.Min {
			return nil, core.FieldErrorf(field, "%v is less than the minimum %v", out, *in.Min)
		}
		if in.Max != nil && f > *in.Max {
			return nil, core.FieldErrorf(field, "%v is more than the maximum %v", out, *in.Max)
		}
	}
	return out, nil
}

// checkComponentCommand checks that the command's references name
// declared inputs and outputs, everywhere including inside optional
// blocks, and that the blocks are closed and not nested.
func checkComponentCommand(c *Component) error {
	inputs := make(map[string]string, len(c.Inputs))
	for k := range c.Inputs {
		inputs[k] = ""
	}
	outputs := make(map[string]string, len(c.Outputs))
	for k := range c.Outputs {
		outputs[k] = ""
	}
	all := make(map[string]bool, len(inputs))
	for k := range inputs {
		all[k] = true
	}
	_, err := ExpandComponentCommand(c.Command, all, inputs, outputs)
	return err
}

// ExpandComponentCommand resolves a component command's optional blocks
// and then its references. A block $[[...]] is kept, without its
// brackets, when every input it references is in provided, and dropped
// otherwise (Azure's rule for optional inputs); blocks do not nest. When
// inputs and outputs are nil the references are left as written (the
// command a child job runs, which its node expands); otherwise they are
// substituted as ExpandCommand does.
func ExpandComponentCommand(command string, provided map[string]bool, inputs, outputs map[string]string) (string, error) {
	var b strings.Builder
	rest := command
	for {
		i := strings.Index(rest, "$[[")
		if i < 0 {
			// A stray ]] outside a block is text; only an unclosed
			// block is an error.
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		body := rest[i+3:]
		j := strings.Index(body, "]]")
		if j < 0 {
			return "", core.FieldErrorf("command", "an optional block $[[ is not closed with ]]")
		}
		block := body[:j]
		if strings.Contains(block, "$[[") {
			return "", core.FieldErrorf("command", "optional blocks $[[...]] cannot be nested")
		}
		keep := true
		refs := 0
		for _, m := range JobRefRE.FindAllStringSubmatch(block, -1) {
			ns, name, _ := strings.Cut(strings.TrimSpace(m[1]), ".")
			if strings.TrimSpace(ns) == "inputs" {
				refs++
				if !provided[strings.TrimSpace(name)] {
					keep = false
				}
			}
		}
		if refs == 0 {
			return "", core.FieldErrorf("command", "the optional block $[[%s]] references no input: a block is kept or dropped by the ${{inputs.x}} it holds", core.Short(block))
		}
		if keep {
			b.WriteString(block)
		}
		rest = body[j+2:]
	}
	out := b.String()
	if inputs == nil && outputs == nil {
		return out, nil
	}
	return ExpandCommand(out, inputs, outputs)
}

// AssetKind is AssetComponent.
func (*Component) AssetKind() asset.AssetKind { return asset.AssetComponent }

// AssetMeta returns the component version's shared fields.
func (c *Component) AssetMeta() asset.AssetMeta {
	return asset.AssetMeta{Workspace: c.Workspace, Name: c.Name, Version: c.Version, Archived: c.Archived, CreatedOn: c.CreatedOn, CreatedBy: c.CreatedBy}
}

// SetAssetMeta replaces the component version's shared fields.
func (c *Component) SetAssetMeta(m asset.AssetMeta) {
	c.Workspace, c.Name, c.Version, c.Archived, c.CreatedOn, c.CreatedBy = m.Workspace, m.Name, m.Version, m.Archived, m.CreatedOn, m.CreatedBy
}

// normalizeComponentIO checks a component's declared inputs and outputs
// and puts their types and modes in their canonical spelling.
func normalizeComponentIO(c *Component, inline bool) error {
	for _, name := range core.SortedKeys(c.Inputs) {
		if err := normalizeComponentInput(name, c.Inputs[name], inline); err != nil {
			return err
		}
	}
	for _, name := range core.SortedKeys(c.Outputs) {
		if err := ValidateJobIOName("outputs", name); err != nil {
			return err
		}
		o := c.Outputs[name]
		if o == nil {
			o = &ComponentOutput{}
			c.Outputs[name] = o
		}
		field := JobKeyPath("outputs", name)
		t, err := jobio.NormalizeOutputType(field+".type", o.Type)
		if err != nil {
			return err
		}
		o.Type = t
		if o.Mode, err = jobio.NormalizeOutputMode(field+".mode", o.Mode); err != nil {
			return err
		}
	}
	return nil
}
