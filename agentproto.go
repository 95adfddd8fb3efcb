package shoal

import "time"

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
}

// JoinResponse gives the agent its node credential.
type JoinResponse struct {
	NodeID     string `json:"node_id"`
	Credential string `json:"credential"`
	// HeartbeatInterval is how often the agent must sync; missing
	// LeaseTTL+LeaseGrace of them makes the node unusable.
	HeartbeatInterval time.Duration `json:"heartbeat_interval"`
	LeaseTTL          time.Duration `json:"lease_ttl"`
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
	Command              string               `json:"command"`
	Code                 string               `json:"code,omitempty"`
	Inputs               map[string]*JobInput `json:"inputs,omitempty"`
	Outputs              []string             `json:"outputs,omitempty"`
	EnvironmentVariables map[string]string    `json:"environment_variables,omitempty"`
	Distribution         string               `json:"distribution,omitempty"`
	ProcessesPerNode     int                  `json:"processes_per_node"`
	MasterAddr           string               `json:"master_addr"`
	MasterPort           int                  `json:"master_port"`
	TimeoutSeconds       int                  `json:"timeout_seconds,omitempty"`
	KillGrace            time.Duration        `json:"kill_grace"`
	// RestoreOutputs is true when an earlier attempt left outputs for this
	// rank: the agent fetches and unpacks them before starting, so a job can
	// resume from its checkpoint.
	RestoreOutputs bool `json:"restore_outputs"`
	// Identities are the managed identities the job may act as (the
	// compute's); empty means the job gets no MSI endpoint. The first is the
	// default (DEFAULT_IDENTITY_CLIENT_ID).
	Identities []TaskIdentity `json:"identities,omitempty"`
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

// RankReport is a state change of one rank, reported by its node.
type RankReport struct {
	State    string `json:"state"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// EndTime is when the rank ended on the node, for a final state: a
	// result reported late (the server was away) keeps its real end.
	EndTime *time.Time `json:"end_time,omitempty"`
}
