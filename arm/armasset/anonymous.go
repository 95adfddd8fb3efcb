package armasset

import "strings"

// The names azure-ai-ml gives the versions it registers for a job on the
// way (an inline Environment(image=…) of a command(), the command
// components of a @dsl.pipeline): anonymous versions, keyed by a hash of
// their content. Shoal keeps them as versions of these names, answers
// them with isAnonymous true and leaves them out of container lists, as
// Azure does.
const (
	AnonymousEnvironmentName = "CliV2AnonymousEnvironment"
	AnonymousComponentName   = "azureml_anonymous"
)

// IsAnonymousName says whether name is one azure-ai-ml gives anonymous
// versions.
func IsAnonymousName(name string) bool {
	return strings.EqualFold(name, AnonymousEnvironmentName) || strings.EqualFold(name, AnonymousComponentName)
}
