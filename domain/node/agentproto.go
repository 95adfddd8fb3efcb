package node

import (
	"time"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/interactive"
)

// The agent protocol: what a node's `shoal agent` and the server exchange.
// The server keeps the truth (which attempt and rank a node should run);
// the agent reports what it runs, and each sync answers with the
// difference. State-based reconciliation keeps both sides right across
// server restarts, agent retries and partitions.

// JoinRequest is an agent's first call: the single-use join token (sent as
// the bearer credential) proves it is the node the server provisioned.
type JoinRequest struct {
	NodeID string `json:"node_id"`
	// Address and Port are where other nodes of a distributed job reach it.
	Address string `json:"address"`
	Port    int    `json:"port"`
	// Runtime is the host's container engine as the agent found it; nil
	// from an agent that does not look (older agents).
	Runtime *catalog.ContainerRuntimeInfo `json:"runtime,omitempty"`
}

// JoinResponse gives the agent its node credential.
type JoinResponse struct {
	NodeID     string `json:"node_id"`
	Credential string `json:"credential"`
	// Servers are the URLs of every server sharing the store (see
	// AgentSyncResponse.Servers).
	Servers []string `json:"servers,omitempty"`
	// HeartbeatInterval is how often the agent must sync; missing
	// LeaseTTL+LeaseGrace of them makes the node unusable.
	HeartbeatInterval time.Duration `json:"heartbeat_interval"`
	LeaseTTL          time.Duration `json:"lease_ttl"`
	// GPUSampleInterval is how often a node with GPUs reports their
	// utilisation while it runs a rank (0: never).
	GPUSampleInterval time.Duration `json:"gpu_sample_interval,omitempty"`
	// Prepull lists the images the node pulls before it takes work (its
	// cluster's prepull_images); the node says when it is done
	// (AgentSyncRequest.Prepulled) and gets no work until then.
	Prepull *compute.PrepullOrder `json:"prepull,omitempty"`
	// ReportsTakeLog: see AgentSyncResponse.ReportsTakeLog.
	ReportsTakeLog bool `json:"reports_take_log,omitempty"`
}

// GPUSample is a node's GPUs' utilisation while it runs a rank; the
// server records it as an event of the job.
type GPUSample struct {
	Time    time.Time        `json:"time"`
	Devices []GPUDeviceUsage `json:"devices"`
}

// GPUDeviceUsage is one GPU in a GPUSample.
type GPUDeviceUsage struct {
	Index              int    `json:"index"`
	Name               string `json:"name"`
	UtilizationPercent int    `json:"utilization_percent"`
}

// RankRef names one rank of one attempt.
type RankRef struct {
	AttemptID string `json:"attempt_id"`
	Rank      int    `json:"rank"`
}

// AgentSyncRequest is the agent's heartbeat: the ranks it is running.
type AgentSyncRequest struct {
	Running []RankRef `json:"running"`
	// Pending lists ranks that ended on the node and whose results it has
	// not reported yet (it reports them next): the server must not start
	// them again.
	Pending []RankRef `json:"pending,omitempty"`
	// First is set on an agent process's first sync. A rank the server
	// believes runs on the node but that a new agent neither runs nor holds
	// a result for died with the agent before it: the server ends it as
	// lost (and requeues the job) instead of waiting for it forever.
	First bool `json:"first,omitempty"`
	// Instance is the report of an instance's agent.
	Instance *InstanceReport `json:"instance,omitempty"`
	// Leaving, when set, says why the node's machine is being taken back
	// (Slurm preempted, cancelled or timed out its pilot job): the server
	// marks the node preempted and requeues its work without spending
	// retries.
	Leaving string `json:"leaving,omitempty"`
	// SSHPort is where a cluster node's SSH server listens (a cluster with
	// ssh_public_access_enabled); 0 when it serves none.
	SSHPort int `json:"ssh_port,omitempty"`
	// Prepulled says the pulls of the join's Prepull ended; sent until a
	// sync carrying it succeeds.
	Prepulled *compute.PrepullReport `json:"prepulled,omitempty"`
	// Runtime is the host's container engine and image cache as the
	// agent sees them now: sent on the first sync and with Prepulled.
	Runtime *catalog.ContainerRuntimeInfo `json:"runtime,omitempty"`
}

// AgentSyncResponse tells the agent what to do.
type AgentSyncResponse struct {
	// Start lists ranks assigned to this node that it does not run yet.
	Start []*AgentTask `json:"start,omitempty"`
	// Stop lists ranks the node must stop, with the reason to report
	// ("canceled", "preempted", "superseded").
	Stop []StopOrder `json:"stop,omitempty"`
	// Exit tells the agent to stop its work and exit: the node is released.
	Exit bool `json:"exit,omitempty"`
	// LeaseExpires is when the node is declared lost without another sync.
	LeaseExpires time.Time `json:"lease_expires"`
	// HeartbeatInterval is how often the agent syncs from now on: the
	// node's lease grows and shrinks with the fleet (decide/nodelease),
	// and a third of it is the pace. Zero (an older server) keeps the
	// join's.
	HeartbeatInterval time.Duration `json:"heartbeat_interval,omitempty"`
	// Instance is what an instance's agent must serve (instance nodes only).
	Instance *InstanceTask `json:"instance,omitempty"`
	// SSH is the admin account a cluster node serves SSH with, when its
	// cluster has ssh_public_access_enabled; sent on the agent's first
	// sync (a cluster's SSH settings cannot change after creation).
	SSH *NodeSSH `json:"ssh,omitempty"`
	// Resync asks the agent to sync again at once: the long-poll this
	// answers began before something changed that only a fresh list of
	// its running ranks can settle.
	Resync bool `json:"resync,omitempty"`
	// Servers are the URLs of every server sharing the store: an agent
	// whose server stops answering moves to another (no load balancer
	// needed in front of them).
	Servers []string `json:"servers,omitempty"`
	// ReportsTakeLog says this server writes the end of a rank's log
	// carried by its final report (RankReport.Log). An older server
	// refuses a report with a field it does not know, so an agent
	// carries the log only after a server said it takes it.
	ReportsTakeLog bool `json:"reports_take_log,omitempty"`
}

// NodeSSH is the admin account of a cluster's nodes (the seed's
// ssh_settings): the login name and the public key or password it logs
// in with.
type NodeSSH struct {
	AdminUsername  string   `json:"admin_username"`
	AuthorizedKeys []string `json:"authorized_keys,omitempty"`
	// PasswordSalt and PasswordSHA256 (hex of SHA-256 over the salt and
	// the admin password) let the node check a password it is never told.
	PasswordSalt   string `json:"password_salt,omitempty"`
	PasswordSHA256 string `json:"password_sha256,omitempty"`
	// RunAs is the principal whose OS account the admin's sessions run as
	// (the cluster's own, compute:<workspace>/<name>): a login to a node
	// reaches neither the server's files nor the jobs' of any user.
	RunAs string `json:"run_as,omitempty"`
}

// StopOrder asks the agent to stop a rank.
type StopOrder struct {
	RankRef
	Reason string `json:"reason"`
}

// AgentTask is everything an agent needs to run one rank of an attempt.
type AgentTask struct {
	RankRef
	JobName   string `json:"job_name"`
	Workspace string `json:"workspace"`
	Attempt   int    `json:"attempt"`
	NodeCount int    `json:"node_count"`
	// Command has ${{inputs.*}} literals substituted; paths of inputs and
	// outputs are substituted by the agent, which knows its folders.
	Command              string                   `json:"command"`
	Code                 string                   `json:"code,omitempty"`
	Inputs               map[string]*job.JobInput `json:"inputs,omitempty"`
	Outputs              []string                 `json:"outputs,omitempty"`
	EnvironmentVariables map[string]string        `json:"environment_variables,omitempty"`
	// InputSources are where the inputs that are not uploaded
	// artifacts come from (data assets, datastore paths, URLs), by
	// input name, resolved by the server; the input's Mode says how the
	// rank gets them (ro_mount, download, direct).
	InputSources map[string]*DataSource `json:"input_sources,omitempty"`
	// OutputTargets are the outputs that go to a datastore other than
	// Shoal's own file store, by output name: the agent uploads what
	// the rank left there before it reports the rank ended. Outputs
	// without one are kept by the server, as ever.
	OutputTargets map[string]*DataSource `json:"output_targets,omitempty"`
	// OutputFiles names, for each uri_file output, the file the command
	// writes: as in Azure ML, ${{outputs.<name>}} of a uri_file output is
	// a file (<outputs>/<name>/<file>), not a folder, so that a job's
	// `echo > ${{outputs.report}}` works. The file is the last segment
	// of the output's path, or the output's name for a folder path.
	OutputFiles map[string]string `json:"output_files,omitempty"`
	// Environment is the job's resolved environment (what its rank runs
	// in); nil: the rank runs on the host.
	Environment *asset.EnvironmentSpec `json:"environment,omitempty"`
	// Container says how to run Environment in a container (the
	// location's mode, registry logins, limits); nil when the task has
	// no image to run.
	Container        *ContainerTask `json:"container,omitempty"`
	Distribution     string         `json:"distribution,omitempty"`
	ProcessesPerNode int            `json:"processes_per_node"`
	MasterAddr       string         `json:"master_addr"`
	MasterPort       int            `json:"master_port"`
	// WorkerCount and ParameterServerCount are a tensorflow job's tasks
	// (workers first, then parameter servers, in global process order);
	// Peers are every rank's node as host:port in rank order, from which
	// the agent writes TF_CONFIG's cluster. Empty for other jobs.
	WorkerCount          int           `json:"worker_count,omitempty"`
	ParameterServerCount int           `json:"parameter_server_count,omitempty"`
	Peers                []string      `json:"peers,omitempty"`
	TimeoutSeconds       int           `json:"timeout_seconds,omitempty"`
	KillGrace            time.Duration `json:"kill_grace"`
	// RestoreOutputs is true when an earlier attempt left outputs for this
	// rank: the agent fetches and unpacks them before starting, so a job can
	// resume from its checkpoint.
	RestoreOutputs bool `json:"restore_outputs"`
	// Identities are the managed identities the job may act as (the
	// compute's); empty means the job gets no MSI endpoint. The first is the
	// default (DEFAULT_IDENTITY_CLIENT_ID).
	Identities []TaskIdentity `json:"identities,omitempty"`
	// RunAs is the principal the rank's processes run for (the job's
	// submitter): an agent running as root runs them as that principal's
	// OS account, never as itself.
	RunAs string `json:"run_as,omitempty"`
	// MaxLogBytes caps the rank's log (the workspace's limit): the agent
	// keeps and ships no more, and marks the cut with LogCutMarker. 0
	// (an older server) means DefaultMaxLogBytes.
	MaxLogBytes int64 `json:"max_log_bytes,omitempty"`
	// Tracking is how the rank logs metrics through MLflow; nil when the
	// server mints no tracking tokens (it has no secrets key).
	Tracking *TrackingTask `json:"tracking,omitempty"`
	// Services are the job's services this rank's node serves while it
	// runs (services.<name>, on the first node or, with nodes: all, on
	// every node).
	Services []ServiceTask `json:"services,omitempty"`
	// Parallel is set for a rank of a parallel job: the agent writes
	// Shoal's driver where job.ParallelDriverEnv says and the driver
	// reaches the job's ledger with it.
	Parallel *ParallelTask `json:"parallel,omitempty"`
}

// ParallelTask is what a parallel job's rank needs to run Shoal's driver
// (package domain/parallel has the protocol it speaks).
type ParallelTask struct {
	// Spec is the job's parallel settings.
	Spec job.ParallelSpec `json:"spec"`
	// Path is the ledger's base path on the server: parallel.PathPrefix
	// + the attempt's ID; the agent puts its server URL before it.
	Path string `json:"path"`
	// Token is the attempt's parallel token (Bearer): it reaches this
	// job's ledger only, and dies with the attempt. Never logged.
	Token string `json:"token"`
	// InputType is the type of the input Spec.InputData names
	// (uri_folder, uri_file, mltable): whether the driver lists files or
	// reads a table.
	InputType string `json:"input_type"`
}

// TrackingTask is what a rank needs to reach its job's MLflow run: the
// agent makes MLFLOW_TRACKING_URI of its own server URL and the
// workspace, and MLFLOW_RUN_ID of the job's name.
type TrackingTask struct {
	// Token is the attempt's tracking token (MLFLOW_TRACKING_TOKEN): it
	// reaches that job's run only, and dies with the attempt. Never logged.
	Token string `json:"token"`
	// ExperimentName is the job's experiment (MLFLOW_EXPERIMENT_NAME).
	ExperimentName string `json:"experiment_name"`
}

// TaskIdentity is a managed identity a job may request tokens for.
type TaskIdentity struct {
	ClientID string `json:"client_id"`
	Name     string `json:"name"`
}

// TokenRequest asks the server for a workload token on behalf of a rank.
type TokenRequest struct {
	Resource string `json:"resource"`
	ClientID string `json:"client_id,omitempty"`
}

// TokenResponse is the MSI endpoint's answer, in the shape Azure's SDKs
// read (expires_on is seconds since the epoch, as a string).
type TokenResponse struct {
	AccessToken string `json:"access_token"`
	ExpiresOn   string `json:"expires_on"`
	ExpiresIn   string `json:"expires_in"`
	Resource    string `json:"resource"`
	TokenType   string `json:"token_type"`
	ClientID    string `json:"client_id"`
}

// Rank report states an agent sends.
const (
	// RankPreparing reports progress before the rank's processes start:
	// the image being pulled or built ("pulling localhost:5000/team/
	// train:3 — 120 of 216 MB"). It changes no state: the server records
	// the Reason on the rank and the job, and an event when it changes
	// kind (pulling → building), not at every byte.
	RankPreparing  = "Preparing"
	RankRunning    = "Running"
	RankFinalizing = "Finalizing"
	RankCompleted  = "Completed"
	RankFailed     = "Failed"
	RankTimedOut   = "TimedOut"
	RankCanceled   = "Canceled"
	RankPreempted  = "Preempted"
	// RankLost is what the server records for a rank whose node lost it.
	RankLost = "Lost"
)

// Rank failures an agent reports.
const (
	// RankPrepareFailed: the node could not prepare the rank (its code,
	// inputs or identity endpoint).
	RankPrepareFailed job.RankFailure = "prepare_failed"
	// RankStartFailed: the rank's command could not be started.
	RankStartFailed job.RankFailure = "start_failed"
	// RankOutputsRefused: the rank's command succeeded but the server
	// refused to keep its outputs (the workspace's storage quota): the
	// job failed, since what it made is gone.
	RankOutputsRefused job.RankFailure = "outputs_refused"
)

// RankReport is a state change of one rank, reported by its node.
type RankReport struct {
	State    string `json:"state"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Failure, when set, says the rank ended before any of its processes
	// ran: Reason is then the job's reason, not its exit code.
	Failure job.RankFailure `json:"failure,omitempty"`
	// StartTime and EndTime are when the rank's processes started and
	// ended on the node, for a final state: a result reported late (the
	// server was away, or the job ended before its Running report got
	// through) keeps its real times.
	StartTime *time.Time `json:"start_time,omitempty"`
	EndTime   *time.Time `json:"end_time,omitempty"`
	// Artifacts, on a final report, says the rank kept its ./outputs or
	// ./logs in its outputs (as job.ArtifactsOutput), uploaded before the
	// report: the job lists them among its outputs.
	Artifacts bool `json:"artifacts,omitempty"`
	// Services, on a Running report, are the job's services on the node
	// as they are now (a Running report is sent again when they change).
	Services []interactive.ServiceInstance `json:"services,omitempty"`
	// Log, on a final report, is the end of the rank's log that the
	// server does not have yet: written, at its offset, before the
	// report is applied, exactly as a log upload would have written it.
	// A quick rank's whole log fits, and its end then costs no request
	// of its own (at most MaxReportLog bytes; a longer end is uploaded
	// first, as before).
	Log *RankLogTail `json:"log,omitempty"`
}

// RankLogTail is the end of a rank's log carried by a report.
type RankLogTail struct {
	// Offset is where Data goes in the log (what the server had).
	Offset int64 `json:"offset"`
	// Data is the log from Offset to its end.
	Data []byte `json:"data"`
}

// MaxReportLog is the most of a log a report carries: a quick rank's
// whole log and more, well within a request's bound once encoded.
const MaxReportLog = 64 << 10

// Node roles: what a node is for. Cluster nodes have none.
const (
	// NodeRoleInstance is a compute instance's own machine: its agent
	// serves SSH, notebooks and applications for the instance's user.
	NodeRoleInstance = "instance"
	// NodeRoleJobSlot is one of a compute instance's job slots: a node
	// that runs one of the instance's jobs on the instance's machine and
	// holds no quota of its own.
	NodeRoleJobSlot = "job_slot"
	// NodeRoleStatic is a machine its owner joined to a cluster by hand
	// (`shoal compute add-node`): never released by the autoscaler.
	NodeRoleStatic = "static"
)

// InstanceTask tells an instance's agent what to serve. It comes with
// every sync answer, so a change (a new SSH key) reaches the agent within
// a heartbeat.
type InstanceTask struct {
	Workspace string `json:"workspace"`
	Name      string `json:"name"`
	// SSHEnabled and AuthorizedKeys: the assigned user's public keys.
	SSHEnabled     bool     `json:"ssh_enabled"`
	AuthorizedKeys []string `json:"authorized_keys,omitempty"`
	// Jupyter: serve the built-in notebook under JupyterBaseURL (the
	// server's proxy path) with NotebookToken.
	JupyterBaseURL string `json:"jupyter_base_url"`
	NotebookToken  string `json:"notebook_token"`
	// Apps are the custom applications to run.
	Apps []*compute.CustomApplication `json:"apps,omitempty"`
	// AppRegistries are the logins for the registries the applications'
	// images and the instance's own image (its image key) come from (the
	// workspace's, as a job's container gets them),
	// and AppBindMountsAllowed the host paths beyond the instance's home
	// that the location lets an application mount.
	AppRegistries        []compute.RegistryCredential `json:"app_registries,omitempty"`
	AppBindMountsAllowed []string                     `json:"app_bind_mounts_allowed,omitempty"`
	// CreationScript is set until it has run once; StartupScript runs at
	// every start of the agent.
	CreationScript *compute.SetupScript `json:"creation_script,omitempty"`
	StartupScript  *compute.SetupScript `json:"startup_script,omitempty"`
	// Identities are the instance's managed identities; the user's shells
	// and notebooks get an MSI endpoint for them.
	Identities []TaskIdentity `json:"identities,omitempty"`
	// RunAs is the instance's assigned user: an agent running as root runs
	// its shells, notebook, applications and setup scripts as that
	// principal's OS account.
	RunAs string `json:"run_as,omitempty"`
	// Container, when set, makes the instance one long-lived container:
	// the server sets it when the location's containers mode is not off
	// and the node's host has a runtime (IsolationContainer).
	Container *InstanceContainer `json:"container,omitempty"`
	// Network, when set, is the container network of the instance's
	// virtual network and subnet (network_settings): its container
	// joins it instead of the host's network. An instance with a
	// Network and no Container is not started (its node has no usable
	// runtime): running it on the host would put it outside its subnet.
	Network *ContainerNetwork `json:"network,omitempty"`
}

// InstanceContainer is how an instance's node runs it as a container.
type InstanceContainer struct {
	// Image is the instance image (the instance's own, else its
	// location's instance_image).
	Image string `json:"image"`
	// RootAccess lets azureuser sudo inside (enable_root_access, true
	// unless the instance says false): root inside is not root on the
	// host (a user namespace of its own).
	RootAccess bool `json:"root_access,omitempty"`
	// VCPUs and MemoryGB are the instance's size: the container's limits.
	VCPUs    int     `json:"vcpus,omitempty"`
	MemoryGB float64 `json:"memory_gb,omitempty"`
}

// Instance isolations, as `compute show` reports them.
const ()

// Instance agent phases.
const (
	InstancePhaseSettingUp   = "setting_up"
	InstancePhaseRunning     = "running"
	InstancePhaseSetupFailed = "setup_failed"
)

// InstanceReport is what an instance's agent tells the server on each
// sync: where it serves, how setup went and what is going on (the idle
// shutdown signals).
type InstanceReport struct {
	Phase string `json:"phase"`
	// SetupError says why setup failed.
	SetupError string `json:"setup_error,omitempty"`
	// CreationScriptDone is set once the creation script has run.
	CreationScriptDone bool   `json:"creation_script_done,omitempty"`
	SSHPort            int    `json:"ssh_port,omitempty"`
	HostKeyFingerprint string `json:"host_key_fingerprint,omitempty"`
	// HostKey is the SSH server's host public key (authorized_keys
	// form), which clients pin.
	HostKey string `json:"host_key,omitempty"`
	// Apps are the applications and where they listen.
	Apps []compute.InstanceAppReport `json:"apps,omitempty"`
	// Activity signals for idle shutdown.
	Kernels     []KernelActivity `json:"kernels,omitempty"`
	Terminals   []KernelActivity `json:"terminals,omitempty"`
	SSHSessions int              `json:"ssh_sessions"`
	// SSHLogins are the logins (and refused attempts) since the last
	// report, for the audit log.
	SSHLogins       []SSHLogin `json:"ssh_logins,omitempty"`
	SSHLastActivity *time.Time `json:"ssh_last_activity,omitempty"`
	CPUPercent      *float64   `json:"cpu_percent,omitempty"`
}

// SSHLogin is a login to an instance's SSH server, or a refused attempt.
type SSHLogin struct {
	At             time.Time `json:"at"`
	User           string    `json:"user,omitempty"`
	Remote         string    `json:"remote"`
	KeyFingerprint string    `json:"key_fingerprint,omitempty"`
	Accepted       bool      `json:"accepted"`
	Error          string    `json:"error,omitempty"`
}

// KernelActivity is a Jupyter kernel or terminal as Jupyter's API lists it.
type KernelActivity struct {
	Name           string    `json:"name"`
	ExecutionState string    `json:"execution_state,omitempty"`
	LastActivity   time.Time `json:"last_activity"`
	Connections    int       `json:"connections,omitempty"`
}
