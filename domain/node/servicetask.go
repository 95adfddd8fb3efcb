package node

// ServiceTask is one of a job's services that a rank's node serves while
// the rank runs (AgentTask.Services): the agent starts the known
// programs (Jupyter Lab, TensorBoard, code-server) in the rank's
// environment, or watches the job's own listener (custom), and reports
// each in its rank's Running reports (RankReport.Services).
type ServiceTask struct {
	Name string `json:"name"`
	// Type is the job's service type (job.ServiceJupyterLab ...).
	Type string `json:"type"`
	// Port is where the service listens; 0 lets the agent choose a free
	// one for a known program.
	Port int `json:"port,omitempty"`
	// LogDir is TensorBoard's log folder, relative to the job's working
	// directory.
	LogDir string `json:"log_dir,omitempty"`
	// BaseURL is the application proxy's path of the service on this
	// node: Jupyter and TensorBoard are told it, since they build their
	// links from it.
	BaseURL string `json:"base_url,omitempty"`
	// SSHPublicKeys are the keys an ssh service lets in (its
	// ssh_public_keys, one or more authorized_keys lines).
	SSHPublicKeys string `json:"ssh_public_keys,omitempty"`
	// Token is Jupyter's token, known to the server (whose proxy sends
	// it) and the service only; never logged, never on a command line.
	Token string `json:"token,omitempty"`
}
