package node

// ViewGen is where the store's view generation stands: how a controller
// keeps computes and nodes in memory between passes and reads only what
// changed, and knows when another server wrote.
type ViewGen struct {
	// Gen is raised by every transaction that writes a node, a compute, a
	// workspace or a workspace's quotas (once per transaction).
	Gen int64
	// Computes is the Gen of the last transaction that wrote a compute, a
	// workspace or a workspace's quotas: a view older than it reads those
	// again (a few rows), while nodes are read by what changed.
	Computes int64
	// Floor is the Gen up to which node deletions were forgotten: a view
	// older than it cannot be brought up to date by changes and reads
	// every node again.
	Floor int64
}

// NodeChange is a node as a transaction of generation Gen wrote it.
type NodeChange struct {
	Node *Node
	Gen  int64
}

// NodeDeletion is a node removed by a transaction of generation Gen.
type NodeDeletion struct {
	ID  string
	Gen int64
}
