package shoal

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// componentKeys are the keys of a command component document.
var componentKeys = keySchema{
	"$schema": nil, "name": nil, "version": nil, "type": nil, "display_name": nil, "description": nil,
	"tags": nil, "is_deterministic": nil, "inputs": nil, "outputs": nil, "code": nil, "environment": nil,
	"command": nil, "environment_variables": nil,
	"resources":    keySchema{"instance_count": nil, "instance_type": nil, "shm_size": nil, "properties": nil},
	"distribution": keySchema{"type": nil, "process_count_per_instance": nil},
	// read-only keys of show output, ignored on input
	"id": readOnly, "archived": readOnly, "created_on": readOnly, "created_by": readOnly, "creation_context": readOnly,
}

var (
	componentInputKeys  = keySchema{"type": nil, "default": nil, "optional": nil, "description": nil, "enum": nil, "min": nil, "max": nil}
	componentOutputKeys = keySchema{"type": nil, "description": nil, "mode": nil}
)

// DecodeComponent decodes a command component document (JSON with the
// snake_case YAML keys; the CLI converts YAML to JSON). Unknown keys and
// values of the wrong shape are EINVALID errors naming the key; the
// rules are NormalizeComponent's. A version written as a number
// (version: 1) is taken as its text.
func DecodeComponent(data []byte) (*Component, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, Errorf(EINVALID, "the component document is empty")
	}
	return decodeComponentRaw(json.RawMessage(data), "")
}

// decodeComponentRaw decodes a component mapping; prefix is the path of
// the mapping in its document ("jobs.train.component." inline in a
// pipeline), which every error names.
func decodeComponentRaw(raw json.RawMessage, prefix string) (*Component, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		var te *json.UnmarshalTypeError
		if prefix != "" {
			return nil, FieldErrorf(strings.TrimSuffix(prefix, "."), "must be a command component: a mapping with command, inputs, outputs, code and environment, or a reference azureml:<name>:<version>")
		}
		if errors.As(err, &te) {
			return nil, Errorf(EINVALID, "the component document must be a mapping of keys to values, got %s", jsonValueName(te.Value))
		}
		if err == nil {
			return nil, Errorf(EINVALID, "the component document must be a mapping of keys to values, got null")
		}
		return nil, Errorf(EINVALID, "the component document is not valid JSON (%s)", jsonProblem(err))
	}
	if err := checkKeys(raw, strings.TrimSuffix(prefix, "."), componentKeys); err != nil {
		return nil, err
	}
	c := &Component{}
	var err error
	for _, f := range []struct {
		key  string
		dst  *string
		text bool
	}{
		{"name", &c.Name, true}, {"version", &c.Version, true}, {"type", &c.Type, false},
		{"display_name", &c.DisplayName, true}, {"description", &c.Description, true},
		{"code", &c.Code, false}, {"command", &c.Command, false},
	} {
		if f.text {
			*f.dst, err = jobText(obj[f.key], prefix+f.key)
		} else {
			*f.dst, err = jobString(obj[f.key], prefix+f.key)
		}
		if err != nil {
			return nil, err
		}
	}
	if raw := nonNull(obj["is_deterministic"]); raw != nil {
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, FieldErrorf(prefix+"is_deterministic", "must be true or false, got %s", shortJSON(raw))
		}
		c.IsDeterministic = &b
	}
	if c.Tags, err = decodeTags(obj["tags"]); err != nil {
		return nil, prefixFieldError(prefix, err)
	}
	if len(c.Tags) == 0 {
		c.Tags = nil
	}
	if c.Environment, err = decodeJobEnvironment(obj["environment"]); err != nil {
		return nil, prefixFieldError(prefix, err)
	}
	if c.EnvironmentVariables, err = decodeJobEnvVars(obj["environment_variables"]); err != nil {
		return nil, prefixFieldError(prefix, err)
	}
	if c.Resources, err = decodeJobResources(obj["resources"]); err != nil {
		return nil, prefixFieldError(prefix, err)
	}
	if c.Distribution, err = decodeJobDistribution(obj["distribution"]); err != nil {
		return nil, prefixFieldError(prefix, err)
	}
	if c.Inputs, err = decodeComponentInputs(obj["inputs"], prefix); err != nil {
		return nil, err
	}
	if c.Outputs, err = decodeComponentOutputs(obj["outputs"], prefix); err != nil {
		return nil, err
	}
	return c, nil
}

func decodeComponentInputs(raw json.RawMessage, prefix string) (map[string]*ComponentInput, error) {
	if nonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if jsonKind(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, FieldErrorf(prefix+"inputs", "must be a mapping of input names to {type, default, optional} mappings")
	}
	out := make(map[string]*ComponentInput, len(m))
	for _, name := range sortedKeys(m) {
		field := prefix + jobKeyPath("inputs", name)
		if jsonKind(m[name]) != '{' {
			return nil, FieldErrorf(field, "must be a mapping with type (and default, optional, description), got %s", shortJSON(m[name]))
		}
		if err := checkKeys(m[name], field, componentInputKeys); err != nil {
			return nil, err
		}
		var o map[string]json.RawMessage
		if err := json.Unmarshal(m[name], &o); err != nil {
			return nil, FieldErrorf(field, "must be a mapping")
		}
		in := &ComponentInput{}
		var err error
		if in.Type, err = jobString(o["type"], field+".type"); err != nil {
			return nil, err
		}
		if in.Description, err = jobText(o["description"], field+".description"); err != nil {
			return nil, err
		}
		if v := nonNull(o["default"]); v != nil {
			switch jsonKind(v) {
			case '{', '[':
				return nil, FieldErrorf(field+".default", "must be a number, string or boolean, got %s", shortJSON(v))
			}
			if err := jobUnmarshalAny(v, &in.Default); err != nil {
				return nil, FieldErrorf(field+".default", "is not valid (%s)", jsonProblem(err))
			}
		}
		if v := nonNull(o["optional"]); v != nil {
			if err := json.Unmarshal(v, &in.Optional); err != nil {
				return nil, FieldErrorf(field+".optional", "must be true or false, got %s", shortJSON(v))
			}
		}
		if v := nonNull(o["enum"]); v != nil {
			var list []any
			if jsonKind(v) != '[' || json.Unmarshal(v, &list) != nil {
				return nil, FieldErrorf(field+".enum", "must be a list of allowed values, got %s", shortJSON(v))
			}
			for _, e := range list {
				switch e.(type) {
				case string, float64, bool:
					in.Enum = append(in.Enum, FormatInputValue(e))
				default:
					return nil, FieldErrorf(field+".enum", "must list strings, numbers or booleans")
				}
			}
		}
		for _, b := range []struct {
			key string
			dst **float64
		}{{"min", &in.Min}, {"max", &in.Max}} {
			if v := nonNull(o[b.key]); v != nil {
				var f float64
				if !isJSONNumberKind(jsonKind(v)) || json.Unmarshal(v, &f) != nil {
					return nil, FieldErrorf(field+"."+b.key, "must be a number, got %s", shortJSON(v))
				}
				*b.dst = &f
			}
		}
		out[name] = in
	}
	return out, nil
}

func decodeComponentOutputs(raw json.RawMessage, prefix string) (map[string]*ComponentOutput, error) {
	if nonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if jsonKind(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, FieldErrorf(prefix+"outputs", "must be a mapping of output names to {type} mappings")
	}
	out := make(map[string]*ComponentOutput, len(m))
	for _, name := range sortedKeys(m) {
		field := prefix + jobKeyPath("outputs", name)
		switch jsonKind(m[name]) {
		case 0, 'n':
			out[name] = &ComponentOutput{}
			continue
		case '{':
		default:
			return nil, FieldErrorf(field, "must be a mapping with type (uri_folder or uri_file), got %s", shortJSON(m[name]))
		}
		if err := checkKeys(m[name], field, componentOutputKeys); err != nil {
			return nil, err
		}
		var o map[string]json.RawMessage
		if err := json.Unmarshal(m[name], &o); err != nil {
			return nil, FieldErrorf(field, "must be a mapping")
		}
		co := &ComponentOutput{}
		var err error
		if co.Type, err = jobString(o["type"], field+".type"); err != nil {
			return nil, err
		}
		if co.Description, err = jobText(o["description"], field+".description"); err != nil {
			return nil, err
		}
		if co.Mode, err = jobString(o["mode"], field+".mode"); err != nil {
			return nil, err
		}
		out[name] = co
	}
	return out, nil
}
