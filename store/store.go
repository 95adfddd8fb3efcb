package store

import (
	"context"
	"time"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/blobs"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/domain/node"
)

// Store keeps Shoal's state. Every read and write happens inside a
// transaction; the transaction carries the time of the change so that all
// rows written by one change agree on it.
type Store interface {
	// Update runs fn in a read-write transaction and commits it when fn
	// returns nil. Writes are serialisable: their outcome is that of
	// running them one at a time. On PostgreSQL with several servers fn
	// may run more than once (a write that conflicted with another
	// server's runs again, and only its last run commits), so fn must
	// have no effect outside tx that a second run would repeat: what it
	// hands its caller it sets, never appends or counts.
	Update(ctx context.Context, fn func(tx Tx) error) error
	// View runs fn in a read-only transaction.
	View(ctx context.Context, fn func(tx Tx) error) error
	// Close releases the store.
	Close() error
}

// Tx is a store transaction. Methods return ENOTFOUND and ECONFLICT as
// documented; any other error is internal.
type Tx interface {
	// Now is the time of this transaction, from the store's clock.
	Now() time.Time

	// ParallelLedger keeps parallel jobs' ledgers (parallel.go).
	ParallelLedger

	// GetWorkspace returns a workspace by name. Returns ENOTFOUND.
	GetWorkspace(name string) (*core.Workspace, error)
	// ListWorkspaces returns all workspaces ordered by name.
	ListWorkspaces() ([]*core.Workspace, error)
	// InsertWorkspace adds a workspace. Returns ECONFLICT if it exists.
	InsertWorkspace(ws *core.Workspace) error
	// DeleteWorkspace removes a workspace with its settings (role
	// assignments, quotas, limits, budgets); the caller checks that no
	// compute or unfinished job remains. Returns ENOTFOUND.
	DeleteWorkspace(name string) error

	// GetCompute returns a compute by workspace and name (names compare
	// case-insensitively). Returns ENOTFOUND.
	GetCompute(workspace, name string) (*compute.Compute, error)
	// ListComputes returns computes matching filter ordered by name.
	ListComputes(filter compute.ComputeFilter) ([]*compute.Compute, error)
	// InsertCompute adds a compute. Returns ECONFLICT if the name is taken.
	InsertCompute(c *compute.Compute) error
	// UpdateCompute replaces the stored compute of the same workspace and
	// name. Returns ENOTFOUND.
	UpdateCompute(c *compute.Compute) error
	// DeleteCompute removes a compute. Returns ENOTFOUND.
	DeleteCompute(workspace, name string) error

	// AppendEvent adds an event and sets its ID.
	AppendEvent(e *core.Event) error
	// ListEvents returns events matching filter, oldest first.
	ListEvents(filter core.EventFilter) ([]*core.Event, error)

	// InsertToken adds an API token.
	InsertToken(t *identity.APIToken) error
	// FindTokenByHash returns the token with that hash. Returns ENOTFOUND.
	FindTokenByHash(hash string) (*identity.APIToken, error)
	// ListTokens returns tokens of a principal ("" for all), oldest first.
	ListTokens(principalID string) ([]*identity.APIToken, error)

	// GetNode returns a node by ID. Returns ENOTFOUND.
	GetNode(id string) (*node.Node, error)
	// ListNodes returns nodes matching filter ordered by ID.
	ListNodes(filter node.NodeFilter) ([]*node.Node, error)
	// ListNodesDue returns, ordered by ID, every node neither idle nor
	// running and every node whose last heartbeat is at or before
	// heardBefore (or unknown): a set that holds every node the node loop
	// may have to act on (lost, released, or asked its provider about),
	// without reading the others' documents. The loop decides on each.
	ListNodesDue(heardBefore time.Time) ([]*node.Node, error)
	// CountNodesByState counts a workspace's compute's nodes by state,
	// draining and pulling (node.StateCount), reading no node documents:
	// what a compute's status shows.
	CountNodesByState(workspace, compute string) ([]node.StateCount, error)
	// CountLiveNodes counts the live nodes (Node.Live) of a workspace's
	// compute, reading no node documents.
	CountLiveNodes(workspace, compute string) (int, error)
	// CountNodes counts every node of every compute, reading no node
	// documents: the fleet whose syncs a node's lease is sized for.
	CountNodes() (int, error)
	// InsertNode adds a node. Returns ECONFLICT if the ID exists.
	InsertNode(n *node.Node) error
	// UpdateNode replaces the stored node of the same ID. Returns ENOTFOUND.
	UpdateNode(n *node.Node) error
	// RenewNodeLeases sets the LastHeartbeat of every node in ids to the
	// transaction's time and changes nothing else (a round of
	// heartbeats), in as few statements as it can; the IDs of nodes not
	// stored are skipped.
	RenewNodeLeases(ids []string) error
	// DeleteNode removes a node. Returns ENOTFOUND.
	DeleteNode(id string) error
	// ViewGeneration returns the store's view generation (ViewGen).
	ViewGeneration() (node.ViewGen, error)
	// ListNodesChangedSince returns the nodes written by transactions of
	// a generation after gen, oldest generation first, and the
	// deletions after gen
	// (-1: every node, and no deletions). A controller's in-memory view
	// reads only these. The nodes may be shared with the store's other
	// reads (a cache of decoded nodes): the caller must not modify them.
	ListNodesChangedSince(gen int64) ([]node.NodeChange, []node.NodeDeletion, error)
	// PruneNodeDeletions forgets the node deletions of generation gen and
	// before, and raises ViewGen.Floor to gen.
	PruneNodeDeletions(gen int64) error
	// FindNodeByCredentialHash returns the node whose credential hash
	// matches. Returns ENOTFOUND.
	FindNodeByCredentialHash(hash string) (*node.Node, error)
	// FindNodeByJoinTokenHash returns the node whose join token hash
	// matches. Returns ENOTFOUND.
	FindNodeByJoinTokenHash(hash string) (*node.Node, error)

	// GetJob returns a job by workspace and exact name. Returns ENOTFOUND.
	GetJob(workspace, name string) (*job.Job, error)
	// ListJobs returns jobs matching filter, ordered by Seq descending
	// (newest first).
	ListJobs(filter job.JobFilter) ([]*job.Job, error)
	// ListQueuedJobs returns the jobs in status Queued of every workspace,
	// ordered by priority descending then Seq ascending.
	ListQueuedJobs() ([]*job.Job, error)
	// ListQueuedJobsCreated returns the queued jobs submitted in
	// (after, upTo], oldest first (then by workspace and name), at most
	// limit of them and every other queued job submitted at the same
	// time as the last one, so that a caller that goes on after the
	// last one's time never skips one. The queue's watcher reads only
	// the jobs whose wait crossed its threshold since its last look.
	// The completion of the last time is a second statement: it agrees
	// with the first in a transaction that reads one snapshot (both
	// stores' View, and their Update).
	ListQueuedJobsCreated(after, upTo time.Time, limit int) ([]QueuedJobRef, error)
	// QueueSummaries returns, for every compute with queued jobs, how
	// many are queued, the nodes they ask for and when the longest
	// waiting was submitted, summed by the database: the metrics read
	// them on every scrape, and 100,000 queued jobs' refs held in the
	// server to count them were a quarter of its heap.
	QueueSummaries() ([]QueueSummary, error)
	// ListQueueHeads returns, for every compute with queued jobs, its
	// first headLen(key) queued jobs in queue order (priority descending,
	// then Seq), with the total node demand of each compute's whole queue;
	// key is "workspace/compute" lower-cased. A placement pass needs no
	// more: a compute with k free nodes can start at most k jobs. The
	// demand is kept as jobs are queued and dequeued, so reading it does
	// not cost a scan of the queue.
	ListQueueHeads(headLen func(key string) int) ([]QueuedJobRef, map[string]int, error)
	// ListQueueHead returns the first n queued jobs of one compute (names
	// compared case-insensitively), in queue order.
	ListQueueHead(workspace, compute string, n int) ([]QueuedJobRef, error)
	// ListQueueComputes returns the keys ("workspace/compute",
	// lower-cased, as ListQueueHeads') of every compute with queued jobs,
	// sorted: a pass over the whole queue reads it one compute at a time
	// (PageComputeQueue), holding one page of one compute's queue, not
	// every one.
	ListQueueComputes() ([]string, error)
	// PageComputeQueue reads every queued job of one compute (names
	// compared case-insensitively), in queue order, and hands them to fn
	// a page at a time: size jobs, or more where jobs of equal priority
	// and seq would straddle two pages (a page then ends after them),
	// all of them in one read. The page's slice is reused for the next:
	// fn copies what it keeps. fn must not use tx (the read is open
	// while it runs); its error ends the read and is returned.
	PageComputeQueue(workspace, compute string, size int, fn func(page []QueuedJobRef) error) error
	// QueueHeadJob returns the first queued job of one compute (names
	// compared case-insensitively) as ListQueueHead(workspace, compute, 1)
	// would, with the job itself, read in the same statement: a node
	// handed its next job (a rank report's hand-on) reads no more. An
	// empty queue returns nil, nil, nil.
	QueueHeadJob(workspace, compute string) (*QueuedJobRef, *job.Job, error)
	// InsertJob adds a job. Returns ECONFLICT if the name is taken in the workspace.
	InsertJob(j *job.Job) error
	// UpdateJob replaces the stored job. Returns ENOTFOUND.
	UpdateJob(j *job.Job) error
	// NextSeq returns the next value of a named counter, starting at 1.
	NextSeq(counter string) (int64, error)

	// GetAttempt returns an attempt by ID. Returns ENOTFOUND.
	GetAttempt(id string) (*job.Attempt, error)
	// GetAttemptWithJob returns an attempt by ID and the job it belongs
	// to, read in one statement (GetAttempt then GetJob in one round
	// trip). Returns ENOTFOUND, as GetAttempt does for the attempt and
	// GetJob for its job.
	GetAttemptWithJob(id string) (*job.Attempt, *job.Job, error)
	// GetNodeWork returns a node, an attempt and the attempt's job, read
	// in one statement: what a rank's report is checked against. Returns
	// ENOTFOUND when any of the three is missing, without saying which
	// (GetNode and GetAttemptWithJob do).
	GetNodeWork(nodeID, attemptID string) (*node.Node, *job.Attempt, *job.Job, error)
	// ListAttempts returns the attempts of a job ordered by Number.
	ListAttempts(workspace, jobName string) ([]*job.Attempt, error)
	// InsertAttempt adds an attempt. Returns ECONFLICT if the ID exists.
	InsertAttempt(a *job.Attempt) error
	// UpdateAttempt replaces the stored attempt. Returns ENOTFOUND.
	UpdateAttempt(a *job.Attempt) error

	// UpdateToken replaces a stored token (revocation). Returns ENOTFOUND.
	UpdateToken(t *identity.APIToken) error
	// GetToken returns a token by ID. Returns ENOTFOUND.
	GetToken(id string) (*identity.APIToken, error)

	// GetUser returns a user by name (case-insensitive). Returns ENOTFOUND.
	GetUser(name string) (*identity.User, error)
	// FindUserByOIDC returns the user linked to an issuer and subject. Returns ENOTFOUND.
	FindUserByOIDC(issuer, subject string) (*identity.User, error)
	// ListUsers returns users ordered by name.
	ListUsers() ([]*identity.User, error)
	// InsertUser adds a user. Returns ECONFLICT.
	InsertUser(u *identity.User) error
	// UpdateUser replaces a user. Returns ENOTFOUND.
	UpdateUser(u *identity.User) error

	// GetIdentity returns an identity by name (case-insensitive). Returns ENOTFOUND.
	GetIdentity(name string) (*identity.Identity, error)
	// FindIdentityByClientID returns an identity by client ID. Returns ENOTFOUND.
	FindIdentityByClientID(clientID string) (*identity.Identity, error)
	// ListIdentities returns identities ordered by name.
	ListIdentities() ([]*identity.Identity, error)
	// InsertIdentity adds an identity. Returns ECONFLICT.
	InsertIdentity(i *identity.Identity) error
	// DeleteIdentity removes an identity. Returns ENOTFOUND.
	DeleteIdentity(name string) error

	// GetServicePrincipal returns a service principal by name
	// (case-insensitive). Returns ENOTFOUND.
	GetServicePrincipal(name string) (*identity.ServicePrincipal, error)
	// FindServicePrincipalByClientID returns a service principal by client
	// ID. Returns ENOTFOUND.
	FindServicePrincipalByClientID(clientID string) (*identity.ServicePrincipal, error)
	// ListServicePrincipals returns service principals ordered by name.
	ListServicePrincipals() ([]*identity.ServicePrincipal, error)
	// InsertServicePrincipal adds a service principal. Returns ECONFLICT.
	InsertServicePrincipal(sp *identity.ServicePrincipal) error
	// UpdateServicePrincipal replaces a service principal (a new secret).
	// Returns ENOTFOUND.
	UpdateServicePrincipal(sp *identity.ServicePrincipal) error
	// DeleteServicePrincipal removes a service principal. Returns ENOTFOUND.
	DeleteServicePrincipal(name string) error

	// InsertNodeSample records a compute's node counts at a time.
	InsertNodeSample(s *node.NodeSample) error
	// ListNodeSamples returns a compute's samples since a time, oldest
	// first, with the last one before it (whose counts held at since).
	ListNodeSamples(workspace, compute string, since time.Time) ([]*node.NodeSample, error)
	// DeleteNodeSamplesBefore removes samples older than t, keeping each
	// compute's newest one; it returns how many went.
	DeleteNodeSamplesBefore(t time.Time) (int, error)

	// ListNodeUsage returns the usage ledger's nodes of a workspace ("" for
	// all) that lived at some time in [since, until), by creation.
	ListNodeUsage(workspace string, since, until time.Time) ([]*node.NodeUsage, error)

	// GetInstanceLive returns the live state of an instance (names
	// compare case-insensitively). Returns ENOTFOUND when none is stored.
	GetInstanceLive(workspace, compute string) (*node.InstanceLive, error)
	// PutInstanceReport stores l's Node, Report and ReportedAt, unless
	// the stored report is newer than l.ReportedAt (a late write from
	// another replica); the proxy time is kept. It reports whether it
	// wrote.
	PutInstanceReport(l *node.InstanceLive) (bool, error)
	// TouchInstanceProxy moves an instance's ProxyLastRequest to at, when
	// at is later than the stored one.
	TouchInstanceProxy(workspace, compute string, at time.Time) error
	// DeleteInstanceLive removes an instance's live state; none stored is
	// no error.
	DeleteInstanceLive(workspace, compute string) error

	// GetWaitReason returns a queued job's wait reason (the workspace
	// compares case-insensitively, the job's name exactly, as in GetJob).
	// Returns ENOTFOUND when none is stored.
	GetWaitReason(workspace, job string) (*job.WaitReason, error)
	// ListWaitReasons returns the wait reasons of a workspace's jobs (""
	// for all), ordered by workspace and job.
	ListWaitReasons(workspace string) ([]*job.WaitReason, error)
	// PutWaitReasons adds the reasons or replaces those of the same jobs;
	// rs names each job once.
	PutWaitReasons(rs []*job.WaitReason) error
	// DeleteWaitReasons removes the reasons of the jobs rs name (their
	// Workspace and Job; the rest is not read) in a few statements
	// instead of one each; none stored is no error.
	DeleteWaitReasons(rs []*job.WaitReason) error

	// GetRole returns a custom role by name (case-insensitive). Returns ENOTFOUND.
	GetRole(name string) (*identity.RoleDefinition, error)
	// ListRoles returns the custom roles ordered by name.
	ListRoles() ([]*identity.RoleDefinition, error)
	// InsertRole adds a custom role. Returns ECONFLICT.
	InsertRole(r *identity.RoleDefinition) error

	// ListRoleAssignments returns assignments of a principal ("" = all) in
	// a workspace ("" = all), ordered by ID.
	ListRoleAssignments(principalID, workspace string) ([]*identity.RoleAssignment, error)
	// InsertRoleAssignment adds an assignment. Returns ECONFLICT when the
	// same principal already has that role in that workspace.
	InsertRoleAssignment(a *identity.RoleAssignment) error
	// DeleteRoleAssignment removes an assignment by ID. Returns ENOTFOUND.
	DeleteRoleAssignment(id string) error

	// AppendAudit adds an audit record and sets its ID.
	AppendAudit(r *identity.AuditRecord) error
	// ListAudit returns audit records matching filter, oldest first.
	ListAudit(filter identity.AuditFilter) ([]*identity.AuditRecord, error)

	// ListSigningKeys returns the workload-token signing keys, newest first.
	ListSigningKeys() ([]*identity.SigningKey, error)
	// InsertSigningKey adds a key. Returns ECONFLICT.
	InsertSigningKey(k *identity.SigningKey) error
	// UpdateSigningKey replaces a key (retirement). Returns ENOTFOUND.
	UpdateSigningKey(k *identity.SigningKey) error

	// GetSetting reads a server setting. Returns ENOTFOUND.
	GetSetting(key string) (string, error)
	// PutSetting writes a server setting.
	PutSetting(key, value string) error

	// ListBudgets returns a workspace's budgets ordered by Name.
	ListBudgets(workspace string) ([]*money.Budget, error)
	// PutBudget adds a budget to a workspace or replaces the one with its
	// Name (scope and period).
	PutBudget(workspace string, b *money.Budget) error
	// DeleteBudget removes a workspace's budget by Name. Returns
	// ENOTFOUND.
	DeleteBudget(workspace, name string) error

	// GetWorkspaceQuotas returns a workspace's own vCPU limits by
	// lower-cased VM family; none is an empty map.
	GetWorkspaceQuotas(workspace string) (map[string]int, error)
	// PutWorkspaceQuota sets a workspace's own limit of a VM family.
	PutWorkspaceQuota(workspace, family string, vcpus int) error

	// GetWorkspaceLimits returns a workspace's limits; a workspace
	// without any has the zero value (the defaults).
	GetWorkspaceLimits(workspace string) (money.WorkspaceLimits, error)
	// PutWorkspaceLimits replaces a workspace's limits.
	PutWorkspaceLimits(workspace string, l money.WorkspaceLimits) error

	// InsertAsset adds a version of a versioned asset (of a's kind); a
	// zero CreatedOn takes the transaction time. Returns ECONFLICT when
	// the workspace has that version of that name (compared
	// case-insensitively): versions never change.
	InsertAsset(a asset.Asset) error
	// GetAsset returns one version of a kind's asset, archived or not.
	// Returns ENOTFOUND.
	GetAsset(kind asset.AssetKind, workspace, name, version string) (asset.Asset, error)
	// LatestAsset returns the version of a kind's asset created last that
	// is not archived. Returns ENOTFOUND.
	LatestAsset(kind asset.AssetKind, workspace, name string) (asset.Asset, error)
	// ListAssets returns the versions of a kind that filter selects,
	// ordered by name and, within a name, newest (created last) first.
	ListAssets(kind asset.AssetKind, filter asset.AssetFilter) ([]asset.Asset, error)
	// SetAssetArchived archives or restores one version of a kind's
	// asset, or every version when version is "". Returns ENOTFOUND when
	// no version matches.
	SetAssetArchived(kind asset.AssetKind, workspace, name, version string, archived bool) error

	// PutRegistry adds a workspace's registry login, or replaces the one
	// of the same server (compared case-insensitively); a zero CreatedOn
	// takes the transaction time.
	PutRegistry(r *asset.Registry) error
	// ListRegistries returns a workspace's registry logins, sealed
	// passwords included, ordered by server.
	ListRegistries(workspace string) ([]*asset.Registry, error)
	// DeleteRegistry removes a workspace's registry login. Returns
	// ENOTFOUND.
	DeleteRegistry(workspace, server string) error

	// PutDatastore creates a workspace's datastore or replaces the one
	// of the same name (compared case-insensitively); a zero CreatedOn
	// takes the transaction time. The built-ins are never stored.
	PutDatastore(d *asset.Datastore) error
	// GetDatastore returns a workspace's stored datastore, sealed
	// credentials included. Returns ENOTFOUND.
	GetDatastore(workspace, name string) (*asset.Datastore, error)
	// ListDatastores returns a workspace's stored datastores, sealed
	// credentials included, ordered by name.
	ListDatastores(workspace string) ([]*asset.Datastore, error)
	// DeleteDatastore removes a workspace's datastore. Returns
	// ENOTFOUND.
	DeleteDatastore(workspace, name string) error

	// BatchTx keeps batch endpoints and deployments (store/batch.go).
	BatchTx
	// NotifyTx keeps webhooks, deliveries and the notifier's cursors
	// (store/notify.go).
	NotifyTx
	// ScheduleTx keeps job schedules (store/schedule.go).
	ScheduleTx

	// PutBlob stores a committed blob of a workspace's container,
	// replacing one of the same name (names are exact, the workspace
	// compared case-insensitively); a zero Created takes the transaction
	// time, Modified always does.
	PutBlob(b *blobs.Blob) error
	// GetBlob returns a committed blob. Returns ENOTFOUND.
	GetBlob(workspace, container, name string) (*blobs.Blob, error)
	// ListBlobs returns up to limit committed blobs of a container whose
	// names start with prefix and sort after marker, in byte order of
	// their names.
	ListBlobs(workspace, container, prefix, marker string, limit int) ([]*blobs.Blob, error)
	// PutBlobBlock stages a block for a blob, replacing one of the same
	// ID.
	PutBlobBlock(b *blobs.Block) error
	// ListBlobBlocks returns the blocks staged for a blob, by ID.
	ListBlobBlocks(workspace, container, blob string) ([]*blobs.Block, error)
	// DeleteBlobBlocks removes the blocks staged for a blob.
	DeleteBlobBlocks(workspace, container, blob string) error
	// DeleteBlobBlocksStagedBefore removes every workspace's blocks
	// staged before a time and never committed, and says how many.
	DeleteBlobBlocksStagedBefore(before time.Time) (int64, error)

	// AppendMetrics adds points to a job's run (the workspace compares
	// case-insensitively, the job's name exactly, as in GetJob); points
	// are never replaced.
	AppendMetrics(workspace, job string, points []mlflowrun.MetricPoint) error
	// ListMetricHistory returns a job's points of one metric, ordered by
	// step, then timestamp, then the order they were logged in.
	ListMetricHistory(workspace, job, key string) ([]mlflowrun.MetricPoint, error)
	// SummarizeMetrics returns each metric of a job's run, ordered by key.
	SummarizeMetrics(workspace, job string) ([]mlflowrun.MetricSummary, error)
	// InsertRunParam sets a parameter of a job's run. Returns ECONFLICT
	// when the key is set (parameters never change).
	InsertRunParam(workspace, job string, p mlflowrun.RunParam) error
	// ListRunParams returns a job's run's parameters, ordered by key.
	ListRunParams(workspace, job string) ([]mlflowrun.RunParam, error)
	// PutRunTag sets a tag of a job's run, replacing one of the same key.
	PutRunTag(workspace, job string, tag mlflowrun.RunTag) error
	// ListRunTags returns a job's run's tags, ordered by key.
	ListRunTags(workspace, job string) ([]mlflowrun.RunTag, error)
	// DeleteRunData removes what a job's run logged (metrics, parameters,
	// tags), for a job that goes; none is no error.
	DeleteRunData(workspace, job string) error
	// InsertExperiment records an experiment; a zero CreatedOn takes the
	// transaction time. Returns ECONFLICT when the workspace has one of
	// that name (compared case-insensitively).
	InsertExperiment(e *mlflowrun.Experiment) error
	// GetExperiment returns an experiment by name (case-insensitive).
	// Returns ENOTFOUND.
	GetExperiment(workspace, name string) (*mlflowrun.Experiment, error)
	// ListExperiments returns a workspace's experiments ordered by name.
	ListExperiments(workspace string) ([]*mlflowrun.Experiment, error)
}

// QueuedJobRef is what scheduling needs of a queued job, read without its
// document: a placement pass reads the heads of the queues, a whole-queue
// pass pages through them, and the queue watcher reads a window of them.
type QueuedJobRef struct {
	Workspace string
	Name      string
	// ComputeKey is the compute's name, lower-cased.
	ComputeKey    string
	Priority      int
	Seq           int64
	InstanceCount int
	// Image is the job's resolved image (Job.ResolvedImage): on a
	// location whose nodes run one image each, the image of its nodes.
	Image string
	// CreatedOn is when the job was submitted: the queue watcher reads
	// how long the queue has held it without its document.
	CreatedOn time.Time
}

// QueueSummary is one compute's queue in figures (Tx.QueueSummaries).
type QueueSummary struct {
	// Key is "workspace/compute", lower-cased, as ListQueueComputes'.
	Key string
	// Jobs is how many jobs are queued; Nodes the nodes they ask for
	// (the sum of their instance counts).
	Jobs, Nodes int
	// Oldest is when the longest-queued job was submitted.
	Oldest time.Time
}

// ReadPool is implemented by stores whose read transactions share a
// bounded pool of connections: ReadConns is its size. The services keep
// agents' syncs to a part of it (service.Config.AgentReads).
type ReadPool interface {
	ReadConns() int
}
