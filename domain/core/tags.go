package core

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Tags are the name-value labels a user sets on a compute, a job of any
// kind and a component. They are read and checked here, once for all of
// them, so that a tag a compute takes a job takes too; this file calls
// none of its callers.

// DecodeTags accepts a mapping whose values are strings, numbers or
// booleans (YAML writes `cost_center: 1234` unquoted) and returns strings.
func DecodeTags(raw json.RawMessage) (map[string]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, FieldErrorf("tags", "must be a mapping of names to values")
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		switch x := v.(type) {
		case string:
			out[k] = x
		case float64:
			out[k] = strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			out[k] = strconv.FormatBool(x)
		case nil:
			out[k] = ""
		default:
			return nil, FieldErrorf("tags."+k, "must be a string, number or boolean")
		}
	}
	return out, nil
}

// ValidateTags checks tag names and values against Azure's limits.
func ValidateTags(tags map[string]string) error {
	if len(tags) > 50 {
		return FieldErrorf("tags", "at most 50 tags are allowed, got %d", len(tags))
	}
	for k, v := range tags {
		if strings.TrimSpace(k) == "" {
			return FieldErrorf("tags", "a tag name must not be empty")
		}
		if len(k) > 512 {
			return FieldErrorf("tags."+k[:20], "tag names are at most 512 characters")
		}
		if strings.ContainsAny(k, "<>%&\\?/") {
			return FieldErrorf("tags."+k, "tag names must not contain < > %% & \\ ? /")
		}
		if len(v) > 256 {
			return FieldErrorf("tags."+k, "tag values are at most 256 characters")
		}
	}
	return nil
}
