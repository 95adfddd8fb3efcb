package node

import (
	"context"
	"strconv"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/identity"
)

// Node states, Azure's names.
const (
	NodePreparing = "preparing" // provisioned, agent not joined yet
	NodeIdle      = "idle"      // joined, no job
	NodeRunning   = "running"   // running a job attempt
	NodeLeaving   = "leaving"   // being released
	NodeUnusable  = "unusable"  // missed its lease or failed
	NodePreempted = "preempted" // low-priority capacity taken back
)

// Node lease defaults: an agent heartbeats every NodeLeaseTTL/3; a node
// whose last heartbeat is older than NodeLeaseTTL+NodeLeaseGrace is declared
// unusable and its work requeued. The sum is the detection bound.
const (
	DefaultNodeLeaseTTL   = 10 * time.Second
	DefaultNodeLeaseGrace = 10 * time.Second
)

// Node is one machine of a compute cluster. On the local provider it is a
// `shoal agent` process.
type Node struct {
	ID        string `json:"node_id"`
	Workspace string `json:"-"`
	// Compute is the cluster the node belongs to.
	Compute string `json:"compute"`
	// Location is the canonical location; with Family, VCPUs and
	// LowPriority it says what quota the node holds while it exists.
	Location string `json:"location"`
	Size     string `json:"size"`
	Family   string `json:"family"`
	VCPUs    int    `json:"vcpus"`
	// GPUs is how many GPUs the node's size has; a provider gives the node
	// that many devices of its host.
	GPUs int `json:"gpus,omitempty"`
	// MemoryGB is the memory of the node's size; providers that reserve
	// memory (Slurm's --mem) ask for this much.
	MemoryGB    float64 `json:"memory_gb,omitempty"`
	LowPriority bool    `json:"low_priority"`

	State            string `json:"node_state"`
	StateReason      string `json:"state_reason,omitempty"`
	PrivateIPAddress string `json:"private_ip_address"`
	PublicIPAddress  string `json:"public_ip_address"`
	Port             int    `json:"port"`
	// SSHPort is where the node's SSH server listens (a cluster with
	// ssh_public_access_enabled), 0 when it serves none.
	SSHPort        int    `json:"ssh_port,omitempty"`
	CurrentJobName string `json:"current_job_name"`
	// CurrentAttemptID and CurrentRank name the work assigned to the node.
	CurrentAttemptID string `json:"current_attempt_id,omitempty"`
	CurrentRank      int    `json:"current_rank"`
	// Draining nodes take no new work and are released when idle.
	Draining bool `json:"draining"`
	// Role is NodeRoleInstance or NodeRoleJobSlot for a compute
	// instance's nodes, "" for a cluster's.
	Role string `json:"role,omitempty"`
	// AddedBy is the principal that added a node joined by hand (add-node),
	// "" for nodes the autoscaler made: who vouched for the machine.
	AddedBy string `json:"added_by,omitempty"`
	// Runtime is the host's container engine as the node's agent found
	// it when it joined (nil: not joined yet, or an agent that does not
	// look). Kept in the node's document: it lives and goes with the node.
	Runtime *catalog.ContainerRuntimeInfo `json:"container_runtime,omitempty"`
	// PullingImages are the cluster's prepull_images the node pulls
	// since it joined: it takes no work until its agent says the pulls
	// ended (StateReason says "pulling images" meanwhile).
	PullingImages []string `json:"pulling_images,omitempty"`
	// Image is the one container image the node runs, on a location whose
	// nodes are containers (Location.NodeImage): it takes only jobs of
	// this image or of none. Empty elsewhere.
	Image string `json:"image,omitempty"`

	// ProviderRef is the provider's handle for the node (a pid for local).
	ProviderRef string `json:"-"`
	// JoinTokenHash and JoinTokenExpires describe the single-use join token.
	JoinTokenHash    string    `json:"-"`
	JoinTokenExpires time.Time `json:"-"`
	// CredentialHash is the hash of the node credential the agent got at join.
	CredentialHash string `json:"-"`

	CreatedOn     time.Time  `json:"created_on"`
	ReadyOn       *time.Time `json:"ready_on,omitempty"`
	IdleSince     *time.Time `json:"idle_since,omitempty"`
	LastHeartbeat time.Time  `json:"last_heartbeat"`
	Version       int64      `json:"-"`
}

// Live reports whether the node holds a place in its cluster's
// max_instances: preparing, idle or running, and not draining (a node on
// its way out frees its place). Stores keep it in a column of its own so
// that counting a cluster's places reads no node documents.
func (n *Node) Live() bool {
	return !n.Draining && (n.State == NodePreparing || n.State == NodeIdle || n.State == NodeRunning)
}

// Holds quota reports whether the node still counts against quota: every
// node that exists and is not gone.
func (n *Node) Holds() bool { return n.State != NodePreempted || n.ProviderRef != "" }

// StateCount is how many nodes of a compute share a state, a draining
// flag and whether they pull their cluster's prepull images: the three
// things a compute's status counts nodes by, kept by the stores in
// columns so that counting reads no node documents.
type StateCount struct {
	State    string
	Draining bool
	Pulling  bool
	Count    int
}

// StateCountOf is n's own StateCount (Count 1).
func StateCountOf(n *Node) StateCount {
	return StateCount{State: n.State, Draining: n.Draining, Pulling: len(n.PullingImages) > 0, Count: 1}
}

// NodeFilter selects nodes.
type NodeFilter struct {
	Workspace string // "" = all
	Compute   string // "" = all
	Location  string // "" = all
	// State keeps the nodes in this state (NodePreparing, ...); "" = all.
	State string
}

// ProvisionRequest asks a provider for one node.
type ProvisionRequest struct {
	Node *Node
	// JoinToken is the secret the node's agent presents once to join.
	JoinToken string
	// ServerURL is where the agent reaches the server.
	ServerURL string
	// ServerCA, when set, is the PEM of the CA of the server's HTTPS
	// certificate (a server with --tls): the agent trusts it, and it
	// reaches the agent with the join token (SHOAL_SERVER_CA).
	ServerCA []byte
	// Delay is the location's provisioning delay to mimic a cloud.
	Delay time.Duration
	// Image, when set, is the container image of the queued job the node
	// is provisioned for: a provider whose node is itself a container
	// (kubernetes) runs the node in it; others ignore it.
	Image string
	// InstanceType, on a kubernetes location, is the instance type of the
	// node's size: its pod gets the instance type's requests, limits,
	// node selector and tolerations instead of the size's figures.
	InstanceType *catalog.InstanceType
}

// Provider creates and removes nodes at a location. Every method takes a
// context and is safe for concurrent use. Implementations: provider/local
// (agent processes on this host), provider/sshpool (agents on a pool of
// hosts over SSH), provider/slurm (agents in Slurm pilot jobs),
// provider/static (nothing: machines join by hand) and provider/fake
// (tests, simulator).
//
// The contract, which the local provider's sharing a host with the server
// would otherwise hide:
//   - The agent binary reaches the machine by the provider's means (the
//     local path, a copy named by its checksum over SSH, a path the Slurm
//     nodes share).
//   - The agent reaches the server at ProvisionRequest.ServerURL (the
//     server's advertise_url); the join token goes to it out of sight of
//     other users (stdin, the environment), never on a command line.
//   - Logs, outputs and artifacts travel over the agent's HTTP connection
//     to the server: no filesystem is shared with the server.
//   - Capacity per machine is what HostLister reports (vCPUs, memory,
//     GPUs); a node whose size no machine can hold is EQUOTA ("out of
//     capacity", not retried soon), a quota the server keeps, an
//     unreachable machine EUNAVAILABLE (transient: retried with backoff).
//   - A node that vanished is told from one that is slow by its lease: a
//     node whose agent misses node_lease + node_lease_grace of heartbeats
//     is lost and its work requeued; Alive says whether its machine still
//     exists, so that a server restart adopts rather than duplicates.
//   - A machine taken back by its owner (Slurm preempting a pilot) makes
//     the agent report its ranks preempted: requeued, retries unspent.
type Provider interface {
	// Name is the provider name used in location config ("local").
	Name() string
	// Provision starts a node. It returns once the start is under way; the
	// node becomes usable when its agent joins. The returned ref is stored
	// as Node.ProviderRef. Returns EQUOTA or ENOTIMPLEMENTED when capacity
	// cannot be had (out of capacity is EQUOTA with a message saying so).
	Provision(ctx context.Context, req ProvisionRequest) (ref string, err error)
	// Release stops the node and frees its resources. It is idempotent:
	// releasing a node that is already gone returns nil.
	Release(ctx context.Context, node *Node) error
	// Alive reports whether the node's machine still exists. The server
	// calls it after a restart to adopt running nodes instead of starting
	// duplicates.
	Alive(ctx context.Context, node *Node) (bool, error)
}

// Purger is an optional Provider capability: Purge removes what a
// released node left on its machine (its work dir). The server calls it
// when a compute instance is deleted: the node's work dir is the
// instance's home, kept across stop and start.
type Purger interface {
	// Purge removes node's work dir. It refuses (ECONFLICT) while an
	// agent still runs there; a node with nothing left returns nil.
	Purge(ctx context.Context, node *Node) error
}

// Reviver is an optional Provider capability: providers whose machines
// keep a node's work dir when its agent exits (the agent gave up on an
// absent server) start a new agent on the same machine and work dir. The
// new agent reports the results the old one kept there, so a job that
// finished while the server was away is neither lost nor run again.
type Reviver interface {
	// Revive starts a new agent for req.Node on its existing machine and
	// work dir, with the new join token req.JoinToken. It kills what is
	// left of the old agent's jobs first. Returns ENOTFOUND when the
	// machine or its work dir is gone.
	Revive(ctx context.Context, req ProvisionRequest) error
}

// SSHConnectionString is how user reaches the node's SSH server (a
// cluster with SSH access): its public address when it has one, else its
// private one, and its SSH port; "" while it serves none.
func (n *Node) SSHConnectionString(user string) string {
	addr := n.PublicIPAddress
	if addr == "" {
		addr = n.PrivateIPAddress
	}
	if addr == "" || n.SSHPort == 0 {
		return ""
	}
	return "ssh " + user + "@" + addr + " -p " + strconv.Itoa(n.SSHPort)
}

// JoinCommand is what `shoal compute add-node` prints: the node it made
// and the one-time command that makes a machine that node.
type JoinCommand struct {
	NodeID    string    `json:"node_id"`
	Compute   string    `json:"compute"`
	JoinToken string    `json:"join_token"`
	ExpiresOn time.Time `json:"expires_on"`
	// Command is the shell command to run on the machine.
	Command string `json:"command"`
}

// NodePrincipal is the principal of a request made with a node credential.
func NodePrincipal(n *Node) *identity.Principal {
	return &identity.Principal{ID: "node:" + n.ID, Name: "node " + n.ID, Kind: identity.PrincipalNode}
}
