package batch

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// Decoding reads the YAML's keys as JSON (the CLI converts YAML to JSON),
// in sorted key order so that the first error is the same on every run;
// a key that is not Azure's is refused with the closest one, and the
// read-only keys of show output are accepted and ignored, so that
// `show -o yaml` can be applied again.

// readOnly are keys of show output, ignored on input.
var readOnly = map[string]bool{"id": true, "created_on": true, "created_by": true, "provisioning_state": true,
	"scoring_uri": true, "openapi_uri": true, "properties": true, "location": true, "creation_context": true}

// doc is a mapping with each value raw until read.
type doc map[string]json.RawMessage

// parse reads a mapping at path ("" for the whole document) and checks
// its keys against allowed (core.DecodeMapping).
func parse(raw json.RawMessage, path, what string, allowed []string) (doc, error) {
	return core.DecodeMapping(raw, path, what, allowed, func(k string) bool { return readOnly[k] || k == "$schema" })
}

func isNull(raw json.RawMessage) bool { return core.IsNullJSON(raw) }

// str reads a string (null or absent: "").
func str(raw json.RawMessage, field string) (string, error) { return core.DecodeString(raw, field) }

// integer reads a whole number (null or absent: nil).
func integer(raw json.RawMessage, field string) (*int, error) {
	if isNull(raw) {
		return nil, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != float64(int(f)) || f > 1<<31 || f < -(1<<31) {
		return nil, core.FieldErrorf(field, "must be a whole number")
	}
	n := int(f)
	return &n, nil
}

// numberOrString reads mini_batch_size: YAML writes 10 unquoted and
// "10mb" quoted or not.
func numberOrString(raw json.RawMessage, field string) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		if f != float64(int64(f)) {
			return "", core.FieldErrorf(field, "must be a whole number of files or a size such as \"10mb\"")
		}
		return strconv.FormatInt(int64(f), 10), nil
	}
	return str(raw, field)
}

// stringMap reads a mapping of names to strings (environment_variables);
// numbers and booleans are written as YAML shows them.
func stringMap(raw json.RawMessage, field string) (map[string]string, error) {
	m, err := core.DecodeTags(raw)
	if err != nil {
		return nil, core.FieldErrorf(field, "must be a mapping of names to strings")
	}
	return m, nil
}

// endpointKeys are a batch endpoint document's keys.
var endpointKeys = []string{"name", "description", "tags", "auth_mode", "defaults"}

// DecodeEndpoint decodes and validates a batch endpoint document.
func DecodeEndpoint(data []byte) (*Endpoint, error) {
	d, err := parse(data, "", "batch endpoint", endpointKeys)
	if err != nil {
		return nil, err
	}
	e := &Endpoint{}
	if e.Name, err = str(d["name"], "name"); err != nil {
		return nil, err
	}
	if e.Description, err = str(d["description"], "description"); err != nil {
		return nil, err
	}
	if e.AuthMode, err = str(d["auth_mode"], "auth_mode"); err != nil {
		return nil, err
	}
	if e.Tags, err = core.DecodeTags(d["tags"]); err != nil {
		return nil, err
	}
	if !isNull(d["defaults"]) {
		dd, err := parse(d["defaults"], "defaults.", "batch endpoint's defaults", []string{"deployment_name"})
		if err != nil {
			return nil, err
		}
		name, err := str(dd["deployment_name"], "defaults.deployment_name")
		if err != nil {
			return nil, err
		}
		if name != "" {
			e.Defaults = &Defaults{DeploymentName: name}
		}
	}
	return e, ValidateEndpoint(e)
}

// ValidateEndpoint checks an endpoint's fields.
func ValidateEndpoint(e *Endpoint) error {
	if err := ValidateName("name", e.Name); err != nil {
		return err
	}
	switch strings.ToLower(e.AuthMode) {
	case "", "aad_token":
		e.AuthMode = "aad_token"
	default:
		return core.FieldErrorf("auth_mode", "%q: a batch endpoint takes aad_token only (Azure's rule); Shoal checks its own tokens", core.Short(e.AuthMode))
	}
	if n := e.DefaultDeployment(); n != "" {
		if err := ValidateName("defaults.deployment_name", n); err != nil {
			return err
		}
	}
	return nil
}
