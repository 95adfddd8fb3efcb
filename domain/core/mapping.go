package core

import (
	"bytes"
	"encoding/json"
	"strings"
)

// DecodeMapping reads a document's mapping, its values raw until read,
// for the decoders of Azure's YAML kinds (the CLI sends YAML as JSON):
// path is "" for the whole document, else the field's name and a dot
// ("trigger."), which error fields start with; what names the kind in
// messages. A key not in allowed is refused naming it, the closest
// allowed key and the allowed ones, keys in sorted order so that the
// first error is the same on every run; ignored, when set, passes keys
// of the whole document that are read-only (show output applied again).
func DecodeMapping(raw json.RawMessage, path, what string, allowed []string, ignored func(key string) bool) (map[string]json.RawMessage, error) {
	var d map[string]json.RawMessage
	if err := json.Unmarshal(bytes.TrimSpace(raw), &d); err != nil || d == nil {
		if path == "" {
			return nil, Errorf(EINVALID, "the %s document must be a mapping of keys to values (%s)", what, strings.Join(allowed, ", "))
		}
		return nil, FieldErrorf(strings.TrimSuffix(path, "."), "must be a mapping (keys: %s)", strings.Join(allowed, ", "))
	}
	for _, k := range SortedKeys(d) {
		if path == "" && ignored != nil && ignored(k) {
			continue
		}
		known := false
		for _, a := range allowed {
			known = known || a == k
		}
		if !known {
			return nil, FieldErrorf(path+k, "unknown key %q%s in a %s; allowed keys: %s", k, DidYouMean(k, allowed), what, strings.Join(allowed, ", "))
		}
	}
	return d, nil
}

// IsNullJSON reports whether a raw value is absent or null.
func IsNullJSON(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// DecodeString reads a document's string value, trimmed (null or
// absent: ""); anything else is refused naming field.
func DecodeString(raw json.RawMessage, field string) (string, error) {
	if IsNullJSON(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", FieldErrorf(field, "must be a string")
	}
	return strings.TrimSpace(s), nil
}
