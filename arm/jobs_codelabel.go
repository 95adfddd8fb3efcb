package arm

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// labelCode records, in a command job's or a sweep trial's document d,
// the code version its codeId named (code_asset: "name:version"), beside
// the artifact trialLike packed: Azure's SDK reads a job back with the
// codeId it sent, never Shoal's artifact ID. Nothing when o names no
// code version.
func labelCode(o obj, d doc) {
	if _, ok := d["code"]; !ok {
		return
	}
	id, err := o.str("codeId", "code_id", "code")
	if err != nil {
		return
	}
	if name, version, ok := codeVersionOf(id); ok {
		d["code_asset"] = name + ":" + version
	}
}

// codeVersionOf is the name and version a codeId names: an ARM id
// (…/codes/<name>/versions/<version>, with or without azureml:) or
// azureml:<name>:<version>.
func codeVersionOf(id string) (name, version string, ok bool) {
	rest := strings.TrimPrefix(id, "azureml:")
	if i := strings.LastIndex(strings.ToLower(rest), "/codes/"); i >= 0 {
		segs := strings.Split(rest[i+len("/codes/"):], "/")
		if len(segs) == 3 && segs[1] == "versions" && segs[0] != "" && segs[2] != "" {
			return segs[0], segs[2], true
		}
		return "", "", false
	}
	if n, v, ok := strings.Cut(rest, ":"); ok && n != "" && v != "" && !strings.ContainsAny(rest, "/") {
		return n, v, true
	}
	return "", "", false
}

// codeShown is the code a job answers as codeId: its code version when
// it was packed from one (as azureml:<name>:<version>, which the answer
// turns into the version's ARM id), else its code as stored.
func codeShown(code, codeAsset string) string {
	if codeAsset != "" {
		return "azureml:" + codeAsset
	}
	return code
}

// componentCode turns the code version a component version's PUT names
// (properties.componentSpec.code: a code version's ARM id or
// azureml:<name>:<version>, as azure-ai-ml sends a @dsl.pipeline's
// command components) into the artifact of its files, which a component
// keeps as its code; any other body is returned as it is, for the
// component's own rules to judge. A code version the workspace lacks is
// refused naming the field.
func componentCode(ctx context.Context, codes CodeResolver, workspace string, body []byte) ([]byte, error) {
	var outer map[string]json.RawMessage
	if codes == nil || json.Unmarshal(body, &outer) != nil {
		return body, nil
	}
	var props map[string]json.RawMessage
	if json.Unmarshal(outer["properties"], &props) != nil {
		return body, nil
	}
	var spec map[string]json.RawMessage
	if json.Unmarshal(props["componentSpec"], &spec) != nil {
		return body, nil
	}
	var code string
	if json.Unmarshal(spec["code"], &code) != nil {
		return body, nil
	}
	if _, _, ok := codeVersionOf(code); !ok {
		return body, nil
	}
	a, err := codes.CodeArtifact(ctx, workspace, code)
	if err != nil {
		return nil, &core.Error{Code: core.ErrorCode(err), Field: componentSpecField + "code", Message: componentSpecField + "code: " + core.ErrorMessage(err)}
	}
	spec["code"], _ = json.Marshal(a)
	name, version, _ := codeVersionOf(code)
	spec["code_asset"], _ = json.Marshal(name + ":" + version)
	if props["componentSpec"], err = json.Marshal(spec); err != nil {
		return nil, err
	}
	if outer["properties"], err = json.Marshal(props); err != nil {
		return nil, err
	}
	return json.Marshal(outer)
}
