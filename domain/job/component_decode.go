package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/jobdecode"
	"github.com/shoal-ml/shoal/domain/job/jobio"
)

// componentKeys are the keys of a command component document.
var componentKeys = compute.KeySchema{
	"$schema": nil, "name": nil, "version": nil, "type": nil, "display_name": nil, "description": nil,
	"tags": nil, "is_deterministic": nil, "inputs": nil, "outputs": nil, "code": nil, "code_asset": nil, "environment": nil,
	"command": nil, "environment_variables": nil,
	"resources":    compute.KeySchema{"instance_count": nil, "instance_type": nil, "shm_size": nil, "properties": nil},
	"distribution": DistributionKeys,
	// read-only keys of show output, ignored on input
	"id": compute.ReadOnly, "archived": compute.ReadOnly, "created_on": compute.ReadOnly, "created_by": compute.ReadOnly, "creation_context": compute.ReadOnly,
}

var (
	componentInputKeys  = compute.KeySchema{"type": nil, "default": nil, "optional": nil, "description": nil, "enum": nil, "min": nil, "max": nil}
	componentOutputKeys = compute.KeySchema{"type": nil, "description": nil, "mode": nil}
)

// DecodeComponent decodes a command component document (JSON with the
// snake_case YAML keys; the CLI converts YAML to JSON). Unknown keys and
// values of the wrong shape are EINVALID errors naming the key; the
// rules are NormalizeComponent's. A version written as a number
// (version: 1) is taken as its text.
func DecodeComponent(data []byte) (*Component, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, core.Errorf(core.EINVALID, "the component document is empty")
	}
	return DecodeComponentRaw(json.RawMessage(data), "")
}

// DecodeComponentRaw decodes a component mapping; prefix is the path of
// the mapping in its document ("jobs.train.component." inline in a
// pipeline), which every error names.
func DecodeComponentRaw(raw json.RawMessage, prefix string) (*Component, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		var te *json.UnmarshalTypeError
		if prefix != "" {
			return nil, core.FieldErrorf(strings.TrimSuffix(prefix, "."), "must be a command component: a mapping with command, inputs, outputs, code and environment, or a reference azureml:<name>:<version>")
		}
		if errors.As(err, &te) {
			return nil, core.Errorf(core.EINVALID, "the component document must be a mapping of keys to values, got %s", compute.JSONValueName(te.Value))
		}
		if err == nil {
			return nil, core.Errorf(core.EINVALID, "the component document must be a mapping of keys to values, got null")
		}
		return nil, core.Errorf(core.EINVALID, "the component document is not valid JSON (%s)", compute.JSONProblem(err))
	}
	if err := compute.CheckKeys(raw, strings.TrimSuffix(prefix, "."), componentKeys); err != nil {
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
		{"code", &c.Code, false}, {"code_asset", &c.CodeAsset, false}, {"command", &c.Command, false},
	} {
		if f.text {
			*f.dst, err = jobio.Text(obj[f.key], prefix+f.key)
		} else {
			*f.dst, err = jobdecode.JobString(obj[f.key], prefix+f.key)
		}
		if err != nil {
			return nil, err
		}
	}
	if raw := compute.NonNull(obj["is_deterministic"]); raw != nil {
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, core.FieldErrorf(prefix+"is_deterministic", "must be true or false, got %s", compute.ShortJSON(raw))
		}
		c.IsDeterministic = &b
	}
	if c.Tags, err = core.DecodeTags(obj["tags"]); err != nil {
		return nil, jobdecode.PrefixFieldError(prefix, err)
	}
	if len(c.Tags) == 0 {
		c.Tags = nil
	}
	if c.Environment, err = decodeJobEnvironment(obj["environment"]); err != nil {
		return nil, jobdecode.PrefixFieldError(prefix, err)
	}
	if c.EnvironmentVariables, err = decodeJobEnvVars(obj["environment_variables"]); err != nil {
		return nil, jobdecode.PrefixFieldError(prefix, err)
	}
	if c.Resources, err = decodeJobResources(obj["resources"]); err != nil {
		return nil, jobdecode.PrefixFieldError(prefix, err)
	}
	if c.Distribution, err = decodeJobDistribution(obj["distribution"]); err != nil {
		return nil, jobdecode.PrefixFieldError(prefix, err)
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
	if compute.NonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if jobdecode.JSONKind(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, core.FieldErrorf(prefix+"inputs", "must be a mapping of input names to {type, default, optional} mappings")
	}
	out := make(map[string]*ComponentInput, len(m))
	for _, name := range core.SortedKeys(m) {
		field := prefix + JobKeyPath("inputs", name)
		if jobdecode.JSONKind(m[name]) != '{' {
			return nil, core.FieldErrorf(field, "must be a mapping with type (and default, optional, description), got %s", compute.ShortJSON(m[name]))
		}
		if err := compute.CheckKeys(m[name], field, componentInputKeys); err != nil {
			return nil, err
		}
		var o map[string]json.RawMessage
		if err := json.Unmarshal(m[name], &o); err != nil {
			return nil, core.FieldErrorf(field, "must be a mapping")
		}
		in := &ComponentInput{}
		var err error
		if in.Type, err = jobdecode.JobString(o["type"], field+".type"); err != nil {
			return nil, err
		}
		if in.Description, err = jobio.Text(o["description"], field+".description"); err != nil {
			return nil, err
		}
		if v := compute.NonNull(o["default"]); v != nil {
			switch jobdecode.JSONKind(v) {
			case '{', '[':
				return nil, core.FieldErrorf(field+".default", "must be a number, string or boolean, got %s", compute.ShortJSON(v))
			}
			if err := JobUnmarshalAny(v, &in.Default); err != nil {
				return nil, core.FieldErrorf(field+".default", "is not valid (%s)", compute.JSONProblem(err))
			}
		}
		if v := compute.NonNull(o["optional"]); v != nil {
			if err := json.Unmarshal(v, &in.Optional); err != nil {
				return nil, core.FieldErrorf(field+".optional", "must be true or false, got %s", compute.ShortJSON(v))
			}
		}
		if v := compute.NonNull(o["enum"]); v != nil {
			var list []any
			if jobdecode.JSONKind(v) != '[' || json.Unmarshal(v, &list) != nil {
				return nil, core.FieldErrorf(field+".enum", "must be a list of allowed values, got %s", compute.ShortJSON(v))
			}
			for _, e := range list {
				switch e.(type) {
				case string, float64, bool:
					in.Enum = append(in.Enum, FormatInputValue(e))
				default:
					return nil, core.FieldErrorf(field+".enum", "must list strings, numbers or booleans")
				}
			}
		}
		for _, b := range []struct {
			key string
			dst **float64
		}{{"min", &in.Min}, {"max", &in.Max}} {
			if v := compute.NonNull(o[b.key]); v != nil {
				var f float64
				if !jobdecode.IsJSONNumberKind(jobdecode.JSONKind(v)) || json.Unmarshal(v, &f) != nil {
					return nil, core.FieldErrorf(field+"."+b.key, "must be a number, got %s", compute.ShortJSON(v))
				}
				*b.dst = &f
			}
		}
		out[name] = in
	}
	return out, nil
}

func decodeComponentOutputs(raw json.RawMessage, prefix string) (map[string]*ComponentOutput, error) {
	if compute.NonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if jobdecode.JSONKind(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, core.FieldErrorf(prefix+"outputs", "must be a mapping of output names to {type} mappings")
	}
	out := make(map[string]*ComponentOutput, len(m))
	for _, name := range core.SortedKeys(m) {
		field := prefix + JobKeyPath("outputs", name)
		switch jobdecode.JSONKind(m[name]) {
		case 0, 'n':
			out[name] = &ComponentOutput{}
			continue
		case '{':
		default:
			return nil, core.FieldErrorf(field, "must be a mapping with type (uri_folder or uri_file), got %s", compute.ShortJSON(m[name]))
		}
		if err := compute.CheckKeys(m[name], field, componentOutputKeys); err != nil {
			return nil, err
		}
		var o map[string]json.RawMessage
		if err := json.Unmarshal(m[name], &o); err != nil {
			return nil, core.FieldErrorf(field, "must be a mapping")
		}
		co := &ComponentOutput{}
		var err error
		if co.Type, err = jobdecode.JobString(o["type"], field+".type"); err != nil {
			return nil, err
		}
		if co.Description, err = jobio.Text(o["description"], field+".description"); err != nil {
			return nil, err
		}
		if co.Mode, err = jobdecode.JobString(o["mode"], field+".mode"); err != nil {
			return nil, err
		}
		out[name] = co
	}
	return out, nil
}
