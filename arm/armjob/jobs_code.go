package armjob

import "context"

// CodeResolver turns a job's codeId (the ARM id of a code version, or
// azureml:<name>:<version>) into the artifact the agent fetches as the
// job's code. The code assets themselves (Azure's codes routes and the
// blob upload) are another package's; Handlers.Codes is nil until the
// server wires one, and a job naming code is then refused.
type CodeResolver interface {
	// CodeArtifact returns the artifact ID (sha256:<hex>) of the code
	// version codeID names in workspace; core.ENOTFOUND naming the code
	// when there is no such version.
	CodeArtifact(ctx context.Context, workspace, codeID string) (artifactID string, err error)
}
