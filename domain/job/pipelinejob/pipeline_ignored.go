package pipelinejob

import (
	"slices"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// maxIgnoredInputs bounds how many undeclared inputs one pipeline may
// give its component steps: past it the document is refused, since a
// list of inputs nothing reads is no pipeline.
const maxIgnoredInputs = 64

// ignoreInput records the place of an input given to a component step
// whose component does not declare it.
func ignoreInput(ignored *[]string, field string) error {
	if slices.Contains(*ignored, field) {
		return nil
	}
	if len(*ignored) >= maxIgnoredInputs {
		return core.FieldErrorf(field, "is one input more than the %d undeclared inputs a pipeline's component steps may be given (each is dropped): the component declares no such input", maxIgnoredInputs)
	}
	*ignored = append(*ignored, field)
	return nil
}

// IgnoredInputsWarning says which inputs given to component steps were
// dropped because their components do not declare them ("" when none).
func IgnoredInputsWarning(spec *job.PipelineSpec) string {
	if spec == nil || len(spec.IgnoredInputs) == 0 {
		return ""
	}
	what := "is an input its component does not declare"
	if len(spec.IgnoredInputs) > 1 {
		what = "are inputs their components do not declare"
	}
	return strings.Join(spec.IgnoredInputs, ", ") + " " + what + ": dropped, as Azure drops them, and not given to the step"
}

// IgnoredWarnings are what a pipeline kept or dropped without acting on
// it, as its events and run history's warnings say: unknown settings
// and undeclared inputs of component steps.
func IgnoredWarnings(spec *job.PipelineSpec) []string {
	var out []string
	for _, w := range []string{IgnoredSettingsWarning(spec), IgnoredInputsWarning(spec)} {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}
