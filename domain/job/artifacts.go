package job

// ArtifactsOutput is the output a command job's ./outputs and ./logs are
// kept as once it ends, as Azure ML keeps them as every job's artifacts:
// the agent moves what they hold into the rank's outputs under this name,
// and the job lists it among its outputs (ArtifactsOf) once kept. A job
// that declares an output of this name keeps it as its own: its ./outputs
// and ./logs are then not kept.
const ArtifactsOutput = "artifacts"

// ArtifactsPath is where Azure ML shows a job's artifacts: the workspace's
// artifact store, under ExperimentRun/dcid.<job>.
func ArtifactsPath(jobName string) string {
	return "azureml://datastores/workspaceartifactstore/paths/ExperimentRun/dcid." + jobName + "/"
}

// ArtifactsOf is the output a job lists once its artifacts are kept.
func ArtifactsOf(jobName string) *JobOutput {
	return &JobOutput{Type: InputTypeURIFolder, Mode: "rw_mount", Path: ArtifactsPath(jobName)}
}

// IsKeptArtifacts reports whether output name of job jobName is the
// artifacts the server recorded (ArtifactsOf), rather than an output the
// job declared: a rank is not handed it as a folder to write.
func IsKeptArtifacts(jobName, name string, o *JobOutput) bool {
	return name == ArtifactsOutput && o != nil && o.Path == ArtifactsPath(jobName)
}

// KeepArtifacts records on j that a rank kept its artifacts; false when
// there is nothing to record (already recorded, or the job declared an
// output of that name, which stays as declared).
func KeepArtifacts(j *Job) bool {
	if _, ok := j.Outputs[ArtifactsOutput]; ok {
		return false
	}
	outs := make(map[string]*JobOutput, len(j.Outputs)+1)
	for k, v := range j.Outputs {
		outs[k] = v
	}
	outs[ArtifactsOutput] = ArtifactsOf(j.Name)
	j.Outputs = outs
	return true
}
