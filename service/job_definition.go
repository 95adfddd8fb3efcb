package service

import (
	"encoding/json"
	"slices"
	"sort"
)

// A job's definition is what it runs: everything its document says but
// the fields Azure updates on a PUT of an existing job (its description,
// tags and display name, job_update.go). Submitting a job again under
// its name compares definitions, so that a document that changes only
// those fields is the same job, whose fields are then updated.

// mutableJobFields are the document's fields outside a job's definition.
var mutableJobFields = []string{"description", "display_name", "tags"}

// withoutMutableFields is a job document's JSON without its mutable
// fields (what docHash hashes: a job's SpecHash since they were taken
// out), its fields in key order.
func withoutMutableFields(doc []byte) ([]byte, error) {
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(doc, &fields); err != nil {
		return nil, err
	}
	for _, k := range mutableJobFields {
		delete(fields, k)
	}
	return json.Marshal(fields)
}

// topFields is spec's JSON document as its top-level fields.
func topFields(spec any) (map[string]json.RawMessage, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	return fields, nil
}

// changedFields are the top-level fields of definition in which
// submitted differs from stored, in their names' order; a field of the
// definition that one document has and the other does not counts.
func changedFields(stored, submitted any) []string {
	a, err := topFields(stored)
	if err != nil {
		return nil
	}
	b, err := topFields(submitted)
	if err != nil {
		return nil
	}
	var out []string
	for k, v := range b {
		if !slices.Contains(mutableJobFields, k) && !sameJSON(a[k], v) {
			out = append(out, k)
		}
	}
	for k, v := range a {
		if _, ok := b[k]; !ok && !slices.Contains(mutableJobFields, k) && !sameJSON(v, nil) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// sameJSON compares two JSON values as values (key order and spacing
// aside); an absent value is null.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if len(a) > 0 {
		if json.Unmarshal(a, &x) != nil {
			return false
		}
	}
	if len(b) > 0 {
		if json.Unmarshal(b, &y) != nil {
			return false
		}
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
