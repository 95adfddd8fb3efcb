package arm

import (
	"context"
	"encoding/json"

	"github.com/shoal-ml/shoal/arm/armasset"
	"github.com/shoal-ml/shoal/arm/armjob"
	"github.com/shoal-ml/shoal/domain/core"
)

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
	if json.Unmarshal(props["componentSpec"], &spec) != nil || spec == nil {
		return body, nil
	}
	if err := armjob.ParallelComponentSpec(ctx, codes, workspace, armasset.ComponentSpecField, spec); err != nil {
		return nil, err
	}
	var code string
	if json.Unmarshal(spec["code"], &code) == nil {
		if _, _, ok := armjob.CodeVersionOf(code); ok {
			a, err := codes.CodeArtifact(ctx, workspace, code)
			if err != nil {
				return nil, &core.Error{Code: core.ErrorCode(err), Field: armasset.ComponentSpecField + "code", Message: armasset.ComponentSpecField + "code: " + core.ErrorMessage(err)}
			}
			spec["code"], _ = json.Marshal(a)
			name, version, _ := armjob.CodeVersionOf(code)
			spec["code_asset"], _ = json.Marshal(name + ":" + version)
		}
	}
	var err error
	if props["componentSpec"], err = json.Marshal(spec); err != nil {
		return nil, err
	}
	if outer["properties"], err = json.Marshal(props); err != nil {
		return nil, err
	}
	return json.Marshal(outer)
}
