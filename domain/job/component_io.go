package job

import (
	"encoding/json"

	"github.com/shoal-ml/shoal/domain/job/jobdecode"
)

// DecodeComponentIO decodes and checks the declared inputs and outputs of
// a component mapping whose other keys are not a command component's (a
// pipeline component: its jobs are the pipeline package's), as a command
// component's are; prefix is the mapping's path, which errors name.
func DecodeComponentIO(inputs, outputs json.RawMessage, prefix string) (map[string]*ComponentInput, map[string]*ComponentOutput, error) {
	c := &Component{}
	var err error
	if c.Inputs, err = decodeComponentInputs(inputs, prefix); err != nil {
		return nil, nil, err
	}
	if c.Outputs, err = decodeComponentOutputs(outputs, prefix); err != nil {
		return nil, nil, err
	}
	if err := normalizeComponentIO(c, false); err != nil {
		return nil, nil, jobdecode.PrefixFieldError(prefix, err)
	}
	return c.Inputs, c.Outputs, nil
}
