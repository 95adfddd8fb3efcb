package job

// ResolvedImage is the container image the job's ranks run in, as its
// environment resolved at submit: "" for a job that runs on the host or
// builds its image. A kubernetes location's node is a pod of one image,
// so this is what places the job (QueuedJobRef.Image) and what a node
// provisioned for it runs.
func (j *Job) ResolvedImage() string {
	if e := j.ResolvedEnvironment; e != nil && e.Build == nil {
		return e.Image
	}
	return ""
}
