package cmdutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ReadYAMLDocument reads a YAML (or JSON) file into a generic mapping.
func ReadYAMLDocument(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--file: %w", err)
	}
	data = schemaLine(data)
	doc := map[string]any{}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("--file %s: not valid YAML: %w", path, err)
	}
	if doc == nil {
		doc = map[string]any{}
	}
	return doc, nil
}

// ToJSON turns a generic YAML value into JSON, refusing mapping keys that
// are not strings (JSON has no other kind).
func ToJSON(doc map[string]any) (json.RawMessage, error) {
	clean, err := jsonable(doc, "")
	if err != nil {
		return nil, err
	}
	return json.Marshal(clean)
}

func jsonable(v any, path string) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := jsonable(e, joinPath(path, k))
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("%s: keys must be strings, got %v", joinPath(path, fmt.Sprint(k)), k)
			}
			c, err := jsonable(e, joinPath(path, ks))
			if err != nil {
				return nil, err
			}
			out[ks] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := jsonable(e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return v, nil
}

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// ApplySet applies one `--set key=value` to doc. Dotted keys reach into
// nested mappings; the value is read as a YAML scalar, so numbers and
// booleans keep their types (max_instances=4, ssh_public_access_enabled=true).
func ApplySet(doc map[string]any, assignment string) error {
	key, value, ok := strings.Cut(assignment, "=")
	if !ok || strings.TrimSpace(key) == "" {
		return fmt.Errorf("--set: %q must look like key=value", assignment)
	}
	var v any
	if err := yaml.Unmarshal([]byte(value), &v); err != nil {
		v = value
	}
	if value == "" {
		v = ""
	}
	parts := strings.Split(strings.TrimSpace(key), ".")
	m := doc
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
	return nil
}

// ParseTags reads az-style tags: each argument holds one or more key=value
// pairs separated by spaces (az's `--tags a=b c=d`) or commas.
func ParseTags(args []string) (map[string]string, error) {
	tags := map[string]string{}
	for _, a := range args {
		for _, pair := range strings.FieldsFunc(a, func(r rune) bool { return r == ' ' || r == ',' }) {
			k, v, ok := strings.Cut(pair, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("--tags: %q must look like key=value", pair)
			}
			tags[k] = v
		}
	}
	return tags, nil
}

// IntFlag parses an integer flag value with a message naming the flag.
func IntFlag(name, v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("--%s: %q is not a whole number", name, v)
	}
	return n, nil
}

// schemaLine reads a document whose first line is a bare schema URL, as
// Microsoft's pages print some examples ("https://azuremlschemas.
// azureedge.net/latest/computeInstance.schema.json" with no "$schema: "),
// as the $schema key it stands for.
func schemaLine(data []byte) []byte {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	end := bytes.IndexByte(trimmed, '\n')
	if end < 0 {
		return data
	}
	first := string(bytes.TrimSpace(trimmed[:end]))
	if strings.HasPrefix(first, "https://azuremlschemas.") && strings.HasSuffix(first, ".json") && !strings.Contains(first, " ") {
		return append([]byte("$schema: "+first+"\n"), trimmed[end+1:]...)
	}
	return data
}
