package asset

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/shoal-ml/shoal/domain/core"
)

// The rules data assets and models share: their document's decoding,
// names and versions, and the check of where their files live.

// decodeDocument decodes a data asset's or model's document strictly: an
// unknown key is refused naming it, Azure's $schema (which its YAML files
// start with) is dropped.
func decodeDocument(raw []byte, v any) error {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return core.Errorf(core.EINVALID, "the document is not a mapping of keys (%s)", strings.TrimPrefix(err.Error(), "json: "))
	}
	delete(doc, "$schema")
	clean, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(clean))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := strings.TrimPrefix(err.Error(), "json: ")
		if k, ok := strings.CutPrefix(msg, "unknown field "); ok {
			k = strings.Trim(k, `"`)
			return &core.Error{Code: core.EINVALID, Field: k, Message: k + ": unknown key"}
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return core.FieldErrorf(te.Field, "has the wrong type (%s)", te.Value)
		}
		return core.Errorf(core.EINVALID, "the document is not valid (%s)", msg)
	}
	return nil
}

// normalizeVersioned checks what every data asset and model version has:
// a name (the rule of environments' names, which Azure's assets share, but
// without the curated prefix), a version when given, a description and
// tags.
func normalizeVersioned(name, version, description string, tags map[string]string) error {
	switch {
	case name == "":
		return core.FieldErrorf("name", "is required")
	case len(name) > MaxEnvironmentNameLength || !EnvironmentNameRE.MatchString(name):
		return core.FieldErrorf("name", "%q must be 1 to %d letters, digits, '-', '_' and '.', starting with a letter or digit", core.Short(name), MaxEnvironmentNameLength)
	}
	if version != "" {
		if err := ValidateEnvironmentVersion(version); err != nil {
			return err
		}
	}
	if err := core.NoControl("description", description); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(description); n > core.MaxDescriptionLength {
		return core.FieldErrorf("description", "must be at most %d characters long (it has %d)", core.MaxDescriptionLength, n)
	}
	return core.ValidateTags(tags)
}

// oneOf returns v lower-cased and trimmed when it is one of allowed, def
// when it is empty, and otherwise a field error listing them.
func oneOf(field, v, def string, allowed []string) (string, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" {
		return def, nil
	}
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	return "", core.FieldErrorf(field, "%q is not one of %s", core.Short(v), strings.Join(allowed, ", "))
}

// assetPathSchemes are the URIs a registered data asset or model may
// live at (design: the datastore, asset-reference and storage URIs). The
// full parse is asset.ParseDataURI's; this is the first, small gate.
var assetPathSchemes = []string{"azureml://", "azureml:", "https://", "http://", "wasbs://", "abfss://", "s3://"}

// ValidateAssetPath checks where a data asset's or model's files live: a
// URI of a kind Shoal reads, on one line, without NUL, backslashes or a
// ".." segment (which would climb out of the datastore path or bucket it
// names). A local path is refused: the server reads no client's disk, and
// the CLI uploads it first.
func ValidateAssetPath(field, p string) error {
	if err := core.ValidatePath(field, p); err != nil {
		return err
	}
	scheme := ""
	for _, s := range assetPathSchemes {
		if len(p) >= len(s) && strings.EqualFold(p[:len(s)], s) {
			scheme = s
			break
		}
	}
	if scheme == "" {
		return core.FieldErrorf(field, "%q is not a URI Shoal reads (azureml://datastores/<datastore>/paths/<path>, https://, wasbs://, abfss://, s3://): a local path is uploaded by `shoal data create -f` or `shoal model create -f` for you", core.Short(p))
	}
	if strings.ContainsAny(p, "\\\x00") {
		return core.FieldErrorf(field, "%q must not contain backslashes or NUL characters", core.Short(p))
	}
	rest := p[len(scheme):]
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	for _, seg := range strings.Split(rest, "/") {
		if seg == ".." || strings.EqualFold(seg, "%2e%2e") {
			return core.FieldErrorf(field, "%q must not contain a '..' segment: name the path itself", core.Short(p))
		}
	}
	_, err := CheckDataURI(field, p)
	return err
}
