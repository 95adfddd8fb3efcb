package jobio

import (
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// NormalizeInputs checks a spec's inputs (NormalizeInput) and their
// names, in name order so that the first error is the same every time.
func NormalizeInputs(inputs map[string]*Input) error {
	for _, name := range core.SortedKeys(inputs) {
		if err := ValidateIOName("inputs", name); err != nil {
			return err
		}
		if err := NormalizeInput("inputs."+name, inputs[name]); err != nil {
			return err
		}
	}
	return nil
}

// NormalizeInput checks one input at field and puts its type and mode in
// canonical spelling: a literal of its type, or data of a path type
// (uri_folder when none is given) at a path CheckInputPath accepts, in a
// mode the type takes (NormalizeInputMode).
func NormalizeInput(field string, in *Input) error {
	if in == nil {
		return core.FieldErrorf(field, "has no value: give a literal (number, string, boolean) or a mapping with type and path")
	}
	t := strings.ToLower(strings.TrimSpace(in.Type))
	if in.Value != nil {
		if t != "" && !IsLiteralType(t) {
			return core.FieldErrorf(field+".type", "a literal input cannot have type %s", core.Short(in.Type))
		}
		if in.Path != "" || in.Mode != "" {
			return core.FieldErrorf(field, "a literal input cannot also have a path or a mode")
		}
		v, err := ConvertLiteral(field, t, in.Value)
		if err != nil {
			return err
		}
		if s, ok := v.(string); ok && strings.ContainsRune(s, 0) {
			return core.FieldErrorf(field, "must not contain NUL characters")
		}
		in.Value, in.Type = v, ""
		return nil
	}
	switch {
	case t == "":
		if in.Path == "" {
			return core.FieldErrorf(field, "give a path (with a type such as uri_folder or uri_file) or a literal value")
		}
		t = TypeURIFolder
	case IsPathType(t):
	case IsLiteralType(t):
		return core.FieldErrorf(field+".default", "is required for a %s input", t)
	default:
		return errInputType(field+".type", in.Type)
	}
	in.Type = t
	if in.Path == "" {
		return core.FieldErrorf(field+".path", "is required for a %s input", t)
	}
	if err := CheckInputPath(field+".path", in.Path); err != nil {
		return err
	}
	m, err := NormalizeInputMode(field+".mode", t, in.Mode)
	if err != nil {
		return err
	}
	in.Mode = m
	return nil
}

// NormalizeInputMode checks a data input's mode for its type (canonical
// spelling) and returns it in canonical spelling; empty stays empty
// (ro_mount). eval_mount and eval_download are mltable's only, as in
// Azure (typ "" is a type not known yet, which the caller checks when it
// is); rw_mount is an output's mode: an input is never written.
func NormalizeInputMode(field, typ, mode string) (string, error) {
	if mode == "" {
		return "", nil
	}
	m := strings.ToLower(strings.TrimSpace(mode))
	switch {
	case m == ModeRWMount:
		return "", core.FieldErrorf(field, "rw_mount is an output mode: an input is read-only; use %s", strings.Join(InputModes, ", "))
	case !contains(InputModes, m):
		return "", core.FieldErrorf(field, "unknown input mode %q; use %s", core.Short(mode), strings.Join(InputModes, ", "))
	case (m == ModeEvalMount || m == ModeEvalDownload) && typ != "" && typ != TypeMLTable:
		return "", core.FieldErrorf(field, "%s is for mltable inputs only; a %s input takes ro_mount, download or direct", m, typ)
	}
	return m, nil
}

// NormalizeOutputs checks a spec's outputs (NormalizeOutput) and their
// names; a nil output becomes a uri_folder output.
func NormalizeOutputs(outputs map[string]*Output) error {
	for _, name := range core.SortedKeys(outputs) {
		if err := ValidateIOName("outputs", name); err != nil {
			return err
		}
		if outputs[name] == nil {
			outputs[name] = &Output{}
		}
		if err := NormalizeOutput("outputs."+name, outputs[name]); err != nil {
			return err
		}
	}
	return nil
}

// NormalizeOutput checks one output at field and puts its type and mode
// in canonical spelling: a path type (uri_folder when none), rw_mount or
// upload, a path CheckOutputPath accepts, and the name and version it
// registers under.
func NormalizeOutput(field string, o *Output) error {
	t, err := NormalizeOutputType(field+".type", o.Type)
	if err != nil {
		return err
	}
	o.Type = t
	if o.Path != "" {
		if err := CheckOutputPath(field+".path", o.Path); err != nil {
			return err
		}
	}
	if o.Mode, err = NormalizeOutputMode(field+".mode", o.Mode); err != nil {
		return err
	}
	o.Name, o.Version = strings.TrimSpace(o.Name), strings.TrimSpace(o.Version)
	return checkAssetName(field, o)
}

// NormalizeOutputType returns an output's type in canonical spelling,
// uri_folder when empty.
func NormalizeOutputType(field, typ string) (string, error) {
	t := strings.ToLower(strings.TrimSpace(typ))
	switch {
	case t == "":
		return TypeURIFolder, nil
	case !IsPathType(t):
		return "", errOutputType(field, typ)
	}
	return t, nil
}

// NormalizeOutputMode checks an output's mode and returns it in
// canonical spelling; empty stays empty (rw_mount).
func NormalizeOutputMode(field, mode string) (string, error) {
	if mode == "" {
		return "", nil
	}
	m := strings.ToLower(strings.TrimSpace(mode))
	switch {
	case m == ModeDirect:
		return "", core.FieldErrorf(field, "direct is an input mode: an output is written through rw_mount (the default) or upload")
	case !contains(OutputModes, m):
		return "", core.FieldErrorf(field, "unknown output mode %q; use %s", core.Short(mode), strings.Join(OutputModes, ", "))
	}
	return m, nil
}
