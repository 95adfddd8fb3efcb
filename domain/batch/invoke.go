package batch

import (
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
)

// The names of an invocation's job's inputs and output: Azure's.
const (
	InputData   = "input_data"
	InputModel  = "model"
	OutputScore = "score"
)

// Input is what an invocation scores: --input and --input-type.
type Input struct {
	// Type is uri_folder (the default), uri_file or mltable.
	Type string `json:"type,omitempty"`
	// Path is a data asset (azureml:<name>:<version>, @latest), a
	// datastore path (azureml://datastores/...), an uploaded folder
	// (sha256:<hex>, the CLI's upload of a local folder) or a URL.
	Path string `json:"path"`
}

// Invocation is an invoke's request: the input and, optionally, the
// deployment to run (the endpoint's default otherwise), a job name and
// where the score output goes.
type Invocation struct {
	Input          Input  `json:"input"`
	DeploymentName string `json:"deployment_name,omitempty"`
	// JobName names the job; empty: generated.
	JobName string `json:"job_name,omitempty"`
	// OutputPath is where the score output goes (a datastore URI);
	// empty: the job's default output place.
	OutputPath string `json:"output_path,omitempty"`
}

// ValidateInput checks and completes an invocation's input.
func ValidateInput(in *Input) error {
	in.Path = strings.TrimSpace(in.Path)
	if in.Path == "" {
		return core.FieldErrorf("input", "is required: a data asset (azureml:<name>@latest), a datastore path (azureml://datastores/<name>/paths/<path>) or a local folder")
	}
	switch strings.ToLower(strings.TrimSpace(in.Type)) {
	case "", jobio.TypeURIFolder:
		in.Type = jobio.TypeURIFolder
	case jobio.TypeURIFile:
		in.Type = jobio.TypeURIFile
	case jobio.TypeMLTable:
		in.Type = jobio.TypeMLTable
	default:
		return core.FieldErrorf("input_type", "%q must be uri_folder, uri_file or mltable", core.Short(in.Type))
	}
	if jobio.PathKind(in.Path) == jobio.Local && !job.ValidateArtifactRef(in.Path) {
		return core.FieldErrorf("input", "%q is a local path, which the server cannot read: the CLI uploads a local folder (shoal batch-endpoint invoke --input ./folder)", core.Short(in.Path))
	}
	return nil
}

// InvocationJob is the parallel job an invocation of endpoint ep runs
// with deployment d: inputs input_data (what is scored) and model (the
// registered model: its folder is AZUREML_MODEL_DIR), output score (a
// uri_folder holding settings.output_file_name, unless output_action is
// summary_only), the scoring script as the entry script, and the
// deployment's settings as the parallel settings. The job is tagged with
// the endpoint and deployment; the service submits it as the invoker.
func InvocationJob(ep *Endpoint, d *Deployment, inv *Invocation) *job.JobSpec {
	s := d.Settings
	par := &job.ParallelSpec{
		InputData:                 "${{inputs." + InputData + "}}",
		MiniBatchSize:             s.MiniBatchSize,
		MaxConcurrencyPerInstance: s.MaxConcurrencyPerInstance,
		MiniBatchErrorThreshold:   s.MiniBatchErrorThreshold,
		ErrorThreshold:            s.ErrorThreshold,
		Retry:                     s.Retry,
		LoggingLevel:              s.LoggingLevel,
		EntryScript:               d.CodeConfiguration.ScoringScript,
		ModelInput:                InputModel,
	}
	if s.OutputAction != OutputSummaryOnly {
		par.AppendRowTo = "${{outputs." + OutputScore + "}}"
		par.AppendRowFile = s.OutputFileName
		if par.AppendRowFile == "" {
			par.AppendRowFile = DefaultOutputFileName
		}
	}
	spec := &job.JobSpec{
		Name:           inv.JobName,
		Type:           job.JobTypeCommand,
		DisplayName:    ep.Name + "-" + d.Name,
		ExperimentName: ep.Name,
		Tags:           map[string]string{TagEndpoint: ep.Name, TagDeployment: d.Name},
		Command:        job.ParallelCommand(""),
		Code:           d.CodeConfiguration.Code,
		Environment:    d.Environment,
		Compute:        d.Compute,
		Inputs: map[string]*job.JobInput{
			InputData:  {Type: inv.Input.Type, Path: inv.Input.Path, Mode: jobio.ModeROMount},
			InputModel: {Type: jobio.TypeCustomModel, Path: d.Model, Mode: jobio.ModeROMount},
		},
		Outputs:  map[string]*job.JobOutput{OutputScore: {Type: jobio.TypeURIFolder, Mode: jobio.ModeRWMount, Path: inv.OutputPath}},
		Parallel: par,
	}
	if len(d.EnvironmentVariables) > 0 {
		spec.EnvironmentVariables = map[string]string{}
		for k, v := range d.EnvironmentVariables {
			spec.EnvironmentVariables[k] = v
		}
	}
	if d.Resources != nil {
		r := *d.Resources
		spec.Resources = &r
	}
	return spec
}
