// Package jobdecode is the scaffold every job document's decoder stands
// on (command, sweep and pipeline jobs), written once so that the kinds read a document alike
// and answer alike: the document must be a JSON mapping; its keys are
// checked in sorted order, so that the first error is the same on every
// run, with a did-you-mean suggestion and the list of allowed keys; an
// error names the path of its value (jobs.train.inputs.data); and fields
// are decoded in the order a kind lists them, stopping at the first
// error. A kind supplies only what differs: its name, its keys and its
// fields. Azure's $schema is one of every kind's keys: it names a schema
// for editors, so it is accepted and its value ignored.
package jobdecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/jobio"
)

// jobReadOnlyKeys are the keys `show -o yaml` adds to a job; they are
// accepted and ignored so that the output can be submitted again.
var jobReadOnlyKeys = map[string]bool{
	"id": true, "status": true, "status_reason": true, "status_reason_code": true, "created_by": true, "created_on": true,
	"start_time": true, "end_time": true, "attempt_count": true, "current_attempt_id": true,
	"failed_attempts": true, "infra_requeues": true, "exit_code": true, "error": true,
	"creation_context": true, "properties": true, "parent_job_name": true,
}

// JobUnsupportedKeys are Azure job keys Shoal knows but does not support;
// a non-null value is rejected with the message given.
// (identity and services were, until jobs took them: domain/job's
// identity.go and domain/job/jobservice.)
var JobUnsupportedKeys = map[string]string{}

// JobDocument is a JSON mapping of a job document, or of a part of one,
// with each value kept raw until its field decodes it.
type JobDocument map[string]json.RawMessage

// ParseJobDocument reads a whole job document, which must be a mapping.
func ParseJobDocument(data []byte) (JobDocument, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, core.Errorf(core.EINVALID, "the job document is empty")
	}
	doc, err := UnmarshalJobDocument(data)
	if err == nil && doc == nil {
		return nil, core.Errorf(core.EINVALID, "the job document must be a mapping of keys to values, got null")
	}
	return doc, err
}

// UnmarshalJobDocument is parseJobDocument without its refusals of an
// empty or null document (nil, no error), for a caller that only peeks.
func UnmarshalJobDocument(data []byte) (JobDocument, error) {
	var doc JobDocument
	if err := json.Unmarshal(data, &doc); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, core.Errorf(core.EINVALID, "the job document must be a mapping of keys to values, got %s", compute.JSONValueName(te.Value))
		}
		return nil, core.Errorf(core.EINVALID, "the job document is not valid JSON (%s)", compute.JSONProblem(err))
	}
	return doc, nil
}

// RequireType returns the document's type as written when it is want
// (in any case, spaces around it ignored): a sweep or pipeline decoder is
// only called for its own kind, so another type is a mistake to name.
func (d JobDocument) RequireType(want string) (string, error) {
	t, err := JobString(d["type"], "type")
	if err != nil {
		return "", err
	}
	if strings.ToLower(strings.TrimSpace(t)) != want {
		return "", core.FieldErrorf("type", "must be %s for a %s job, got %q", want, want, core.Short(t))
	}
	return t, nil
}

// CheckKeys fails on the first key, in sorted order, that a job of kind
// ("command job") does not take. A key Azure has and Shoal does not
// support is refused, with why, when it has a value (null asks for
// nothing); the read-only keys of `show` output are ignored so that the
// output can be submitted again; an unknown key is refused with the
// closest known key and the list of allowed keys; and a mapping under a
// known key is checked against its own schema.
func (d JobDocument) CheckKeys(kind string, keys compute.KeySchema) error {
	for _, k := range core.SortedKeys(d) {
		if msg, ok := JobUnsupportedKeys[k]; ok {
			if compute.NonNull(d[k]) != nil {
				return core.FieldErrorf(k, "%s", msg)
			}
			continue
		}
		if jobReadOnlyKeys[k] {
			continue
		}
		sub, ok := keys[k]
		if !ok {
			allowed := compute.SchemaKeys(keys)
			return core.FieldErrorf(k, "unknown key %q%s in a %s; allowed keys: %s (read-only keys of show output are ignored)", k, core.DidYouMean(k, allowed), kind, strings.Join(allowed, ", "))
		}
		if s, ok := sub.(compute.KeySchema); ok && compute.NonNull(d[k]) != nil {
			if err := compute.CheckKeys(d[k], k, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// Pick returns the entries of d whose key keep takes: the part of a
// document that another decoder reads.
func (d JobDocument) Pick(keep func(key string) bool) JobDocument {
	part := JobDocument{}
	for k, v := range d {
		if keep(k) {
			part[k] = v
		}
	}
	return part
}

// JobField is how one key of a document is decoded into its place in a
// spec; path is the key's path in the whole document, for errors.
type JobField struct {
	Key    string
	Decode func(raw json.RawMessage, path string) error
}

// DecodeFields decodes the fields in the order given, each from the
// value of its key (nil when absent), and stops at the first error.
// prefix is the path of d in the whole document ("settings.").
func (d JobDocument) DecodeFields(prefix string, fields ...JobField) error {
	for _, f := range fields {
		if err := f.Decode(d[f.Key], prefix+f.Key); err != nil {
			return err
		}
	}
	return nil
}

// StringField decodes a string; null or absent is "".
func StringField(key string, dst *string) JobField {
	return JobField{key, func(raw json.RawMessage, path string) (err error) {
		*dst, err = JobString(raw, path)
		return err
	}}
}

// TextField decodes a string as StringField does, taking a number or a
// boolean as its text: YAML writes `experiment_name: 2024` unquoted.
func TextField(key string, dst *string) JobField {
	return JobField{key, func(raw json.RawMessage, path string) (err error) {
		*dst, err = jobio.Text(raw, path)
		return err
	}}
}

// TagsField decodes the tags; none is nil, so that a spec without tags
// reads the same whether it wrote `tags: {}` or nothing.
func TagsField(dst *map[string]string) JobField {
	return JobField{"tags", func(raw json.RawMessage, _ string) (err error) {
		*dst, err = core.DecodeTags(raw)
		if len(*dst) == 0 {
			*dst = nil
		}
		return err
	}}
}

// ValueField decodes a key with a decoder of its own, which names its
// paths itself.
func ValueField[T any](key string, dst *T, decode func(json.RawMessage) (T, error)) JobField {
	return JobField{key, func(raw json.RawMessage, _ string) (err error) {
		*dst, err = decode(raw)
		return err
	}}
}

// JobNameFields are the keys that name and describe a job of any kind,
// first among its fields.
func JobNameFields(name, displayName, experimentName, description *string) []JobField {
	return []JobField{
		TextField("name", name), TextField("display_name", displayName),
		TextField("experiment_name", experimentName), TextField("description", description),
	}
}

// DecodeMapping reads the mapping under a key, nil when it is absent or
// null; path names the key in an error.
func DecodeMapping(raw json.RawMessage, path string) (JobDocument, error) {
	if compute.NonNull(raw) == nil {
		return nil, nil
	}
	var m JobDocument
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, core.FieldErrorf(path, "must be a mapping")
	}
	return m, nil
}

// CheckedMapping reads a mapping whose keys must all be among keys,
// checked as checkKeys checks them; path names the mapping in an error.
func CheckedMapping(raw json.RawMessage, path string, keys compute.KeySchema) (JobDocument, error) {
	if err := compute.CheckKeys(raw, path, keys); err != nil {
		return nil, err
	}
	var m JobDocument
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, core.FieldErrorf(path, "must be a mapping")
	}
	return m, nil
}

// JSONKind returns the first byte of a JSON value: '"', '{', '[', 't', 'f',
// 'n', or a digit or '-' for a number; 0 for an absent value.
func JSONKind(raw json.RawMessage) byte { return jobio.JSONKind(raw) }

// IsJSONNumberKind reports whether k, a value's first byte (JSONKind),
// starts a JSON number.
func IsJSONNumberKind(k byte) bool { return k == '-' || (k >= '0' && k <= '9') }

// JobString decodes a string; null or absent is "".
func JobString(raw json.RawMessage, field string) (string, error) { return jobio.String(raw, field) }

// PrefixFieldError puts prefix before the field an EINVALID error names,
// in its Field and its message, so that an error found inside a part of a
// document (a pipeline's step) names its path in the whole document
// (jobs.train.inputs.data). Other errors pass through.
func PrefixFieldError(prefix string, err error) error {
	var e *core.Error
	if prefix == "" || !errors.As(err, &e) || e.Field == "" {
		return err
	}
	return &core.Error{Code: e.Code, Field: prefix + e.Field, Message: prefix + e.Message}
}
