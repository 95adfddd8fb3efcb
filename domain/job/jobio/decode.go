package jobio

import (
	"encoding/json"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

var (
	inputKeys  = compute.KeySchema{"type": nil, "path": nil, "mode": nil, "default": nil, "value": nil}
	outputKeys = compute.KeySchema{"type": nil, "mode": nil, "path": nil, "name": nil, "version": nil}
)

// DecodeInputs decodes a document's inputs: each a literal or a {type,
// path, mode} mapping, by name; an empty mapping is none.
func DecodeInputs(raw json.RawMessage) (map[string]*Input, error) {
	if compute.NonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if JSONKind(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, core.FieldErrorf("inputs", "must be a mapping of input names to values or to {type, path, mode} mappings")
	}
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]*Input, len(m))
	for _, name := range core.SortedKeys(m) {
		in, err := DecodeInput(KeyPath("inputs", name), m[name])
		if err != nil {
			return nil, err
		}
		out[name] = in
	}
	return out, nil
}

// DecodeInput decodes one input at field: a literal value or a {type,
// path, mode} mapping. A mapping with a path and no type is a
// uri_folder; {type: integer, default: 5} is the literal 5. The rules
// that do not depend on the JSON shape (the path's kind, the mode for
// the type) are NormalizeInput's.
func DecodeInput(field string, raw json.RawMessage) (*Input, error) {
	switch k := JSONKind(raw); {
	case k == 0 || k == 'n':
		return nil, core.FieldErrorf(field, "has no value: give a literal (number, string, boolean) or a mapping with type and path")
	case k == '[':
		return nil, core.FieldErrorf(field, "must be a literal (number, string, boolean) or a mapping with type and path, not a list")
	case k != '{':
		var v any
		if err := UnmarshalAny(raw, &v); err != nil {
			return nil, core.FieldErrorf(field, "is not valid (%s)", compute.JSONProblem(err))
		}
		return &Input{Value: v}, nil
	}
	if err := compute.CheckKeys(raw, field, inputKeys); err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, core.FieldErrorf(field, "must be a mapping")
	}
	typ, err := String(m["type"], field+".type")
	if err != nil {
		return nil, err
	}
	path, err := String(m["path"], field+".path")
	if err != nil {
		return nil, err
	}
	mode, err := String(m["mode"], field+".mode")
	if err != nil {
		return nil, err
	}
	valueKey := ""
	for _, k := range []string{"default", "value"} {
		if compute.NonNull(m[k]) != nil {
			if valueKey != "" {
				return nil, core.FieldErrorf(field+".value", "give either default or value, not both")
			}
			valueKey = k
		}
	}
	var value any
	if valueKey != "" {
		switch JSONKind(m[valueKey]) {
		case '{', '[':
			return nil, core.FieldErrorf(field+"."+valueKey, "must be a number, string or boolean, got %s", compute.ShortJSON(m[valueKey]))
		}
		if err := UnmarshalAny(m[valueKey], &value); err != nil {
			return nil, core.FieldErrorf(field+"."+valueKey, "is not valid (%s)", compute.JSONProblem(err))
		}
	}
	t := strings.ToLower(strings.TrimSpace(typ))
	switch {
	case t == "":
		switch {
		case path != "":
			if valueKey != "" {
				return nil, core.FieldErrorf(field+"."+valueKey, "is not allowed with path: an input is either a literal value or data at a path")
			}
			return &Input{Type: TypeURIFolder, Path: path, Mode: mode}, nil
		case valueKey != "":
			if mode != "" {
				return nil, core.FieldErrorf(field+".mode", "is only allowed for data inputs (%s)", strings.Join(PathTypes, ", "))
			}
			return &Input{Value: value}, nil
		}
		return nil, core.FieldErrorf(field, "give a path (with a type such as uri_folder or uri_file) or a literal value")
	case IsPathType(t):
		if valueKey != "" {
			return nil, core.FieldErrorf(field+"."+valueKey, "is not allowed for a %s input; give its path", t)
		}
		if strings.TrimSpace(path) == "" {
			return nil, core.FieldErrorf(field+".path", "is required for a %s input", t)
		}
		return &Input{Type: t, Path: path, Mode: mode}, nil
	case IsLiteralType(t):
		if path != "" {
			return nil, core.FieldErrorf(field+".path", "is not allowed for a %s input; give its value as default", t)
		}
		if mode != "" {
			return nil, core.FieldErrorf(field+".mode", "is not allowed for a %s input", t)
		}
		if valueKey == "" {
			return nil, core.FieldErrorf(field+".default", "is required for a %s input", t)
		}
		v, err := ConvertLiteral(field+"."+valueKey, t, value)
		if err != nil {
			return nil, err
		}
		return &Input{Value: v}, nil
	}
	return nil, errInputType(field+".type", typ)
}

func errInputType(field, typ string) error {
	return core.FieldErrorf(field, "input type %q is not supported; supported: %s, %s", core.Short(typ), strings.Join(PathTypes, ", "), strings.Join(LiteralTypes, ", "))
}

func errOutputType(field, typ string) error {
	return core.FieldErrorf(field, "output type %q is not supported; supported: %s", core.Short(typ), strings.Join(PathTypes, ", "))
}

// DecodeOutputs decodes a document's outputs, by name; an output
// written empty (`model:`) is a uri_folder output.
func DecodeOutputs(raw json.RawMessage) (map[string]*Output, error) {
	if compute.NonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if JSONKind(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, core.FieldErrorf("outputs", "must be a mapping of output names to {type, mode, path} mappings")
	}
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]*Output, len(m))
	for _, name := range core.SortedKeys(m) {
		o, err := DecodeOutput(KeyPath("outputs", name), m[name])
		if err != nil {
			return nil, err
		}
		out[name] = o
	}
	return out, nil
}

// DecodeOutput decodes one output at field: null or a {type, mode,
// path, name, version} mapping. Its type is put in canonical spelling
// (uri_folder when absent); the other rules are NormalizeOutput's.
func DecodeOutput(field string, raw json.RawMessage) (*Output, error) {
	switch JSONKind(raw) {
	case 0, 'n':
		return &Output{Type: TypeURIFolder}, nil
	case '{':
	default:
		return nil, core.FieldErrorf(field, "must be a mapping with type, mode and path (or empty for a uri_folder output), got %s", compute.ShortJSON(raw))
	}
	if err := compute.CheckKeys(raw, field, outputKeys); err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, core.FieldErrorf(field, "must be a mapping")
	}
	var o Output
	var err error
	for _, f := range []struct {
		key string
		dst *string
		get func(json.RawMessage, string) (string, error)
	}{
		{"type", &o.Type, String}, {"mode", &o.Mode, String}, {"path", &o.Path, String},
		{"name", &o.Name, String}, {"version", &o.Version, Text},
	} {
		if *f.dst, err = f.get(m[f.key], field+"."+f.key); err != nil {
			return nil, err
		}
	}
	t := strings.ToLower(strings.TrimSpace(o.Type))
	switch {
	case t == "":
		t = TypeURIFolder
	case !IsPathType(t):
		return nil, errOutputType(field+".type", o.Type)
	}
	o.Type = t
	return &o, nil
}
