// Package batch is Azure ML's batch endpoints and deployments as Shoal
// keeps them: an endpoint is a stable name that users and services
// invoke; each of its deployments says how to score (a registered
// model, a scoring script in a code folder, an environment, a compute
// cluster and the parallel settings). An invocation is a parallel job
// (job.ParallelSpec) built from the deployment by InvocationJob; nothing
// here runs anything. Standard library and the domain only.
package batch

import (
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// Endpoint is a batch endpoint (Azure's batchEndpoint schema).
type Endpoint struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	// AuthMode is Azure's auth_mode: aad_token, the only one Azure's
	// batch endpoints take; Shoal checks its own tokens either way.
	AuthMode string `json:"auth_mode,omitempty"`
	// Defaults.DeploymentName is the deployment an invoke without
	// --deployment-name runs; empty until one is set (the first
	// deployment created under the endpoint becomes it).
	Defaults *Defaults `json:"defaults,omitempty"`

	Workspace string    `json:"-"`
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedOn time.Time `json:"created_on"`
}

// Defaults are an endpoint's defaults.
type Defaults struct {
	DeploymentName string `json:"deployment_name,omitempty"`
}

// DefaultDeployment is the endpoint's default deployment's name, or "".
func (e *Endpoint) DefaultDeployment() string {
	if e == nil || e.Defaults == nil {
		return ""
	}
	return e.Defaults.DeploymentName
}

// Deployment types: only a model deployment is built (Azure's pipeline
// deployments are refused with a sentence).
const (
	TypeModel    = "model"
	TypePipeline = "pipeline"
)

// Output actions (settings.output_action).
const (
	OutputAppendRow   = "append_row"
	OutputSummaryOnly = "summary_only"
)

// DefaultOutputFileName is settings.output_file_name's default, Azure's.
const DefaultOutputFileName = "predictions.csv"

// Deployment is a batch deployment (Azure's modelBatchDeployment schema).
type Deployment struct {
	Name         string            `json:"name"`
	EndpointName string            `json:"endpoint_name"`
	Description  string            `json:"description,omitempty"`
	Tags         map[string]string `json:"tags,omitempty"`
	Type         string            `json:"type"`
	// Model is the registered model as written (azureml:<name>:<version>
	// or azureml:<name>@latest); every invocation resolves it again,
	// so @latest follows new versions, and the job records the version.
	Model string `json:"model"`
	// CodeConfiguration is the scoring script and its folder (an
	// uploaded artifact, "sha256:<hex>", or a code asset reference).
	CodeConfiguration CodeConfiguration `json:"code_configuration"`
	// Environment is as a job's environment: a registered one's
	// reference, or an inline image; nil runs on the host.
	Environment any    `json:"environment,omitempty"`
	Compute     string `json:"compute"`
	// InstanceCount is resources.instance_count (default 1).
	Resources            *job.JobResources `json:"resources,omitempty"`
	Settings             Settings          `json:"settings"`
	EnvironmentVariables map[string]string `json:"environment_variables,omitempty"`

	Workspace string    `json:"-"`
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedOn time.Time `json:"created_on"`
}

// CodeConfiguration is a deployment's code and scoring script.
type CodeConfiguration struct {
	Code          string `json:"code"`
	ScoringScript string `json:"scoring_script"`
}

// Settings are a model deployment's parallel settings (Azure keeps them
// under settings:, and at the top level in older files; both are read).
type Settings struct {
	MaxConcurrencyPerInstance int `json:"max_concurrency_per_instance,omitempty"`
	// MiniBatchSize is as written: files per mini-batch, or a size.
	MiniBatchSize           string             `json:"mini_batch_size,omitempty"`
	OutputAction            string             `json:"output_action,omitempty"`
	OutputFileName          string             `json:"output_file_name,omitempty"`
	Retry                   *job.ParallelRetry `json:"retry_settings,omitempty"`
	ErrorThreshold          *int               `json:"error_threshold,omitempty"`
	MiniBatchErrorThreshold *int               `json:"mini_batch_error_threshold,omitempty"`
	LoggingLevel            string             `json:"logging_level,omitempty"`
}

// Tags an invocation's job carries, so that list-jobs finds it and
// people see where it came from.
const (
	TagEndpoint   = "azureml.batchEndpoint"
	TagDeployment = "azureml.batchDeployment"
)

// nameRE is Azure's rule for endpoint and deployment names: a letter,
// then letters, digits and '-', 3 to 32 characters, not ending in '-'.
var nameRE = core.LazyRegexp(`^[A-Za-z][A-Za-z0-9-]{1,30}[A-Za-z0-9]$`)

// ValidateName checks an endpoint's or deployment's name (field names
// the key in errors).
func ValidateName(field, name string) error {
	switch {
	case name == "":
		return core.FieldErrorf(field, "is required")
	case !nameRE.MatchString(name):
		return core.FieldErrorf(field, "%q must be 3 to 32 characters: a letter first, then letters, digits and '-', not ending in '-'", core.Short(name))
	}
	return nil
}
