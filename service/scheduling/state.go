// Package scheduling holds what placement plans from and how it starts
// work: a pass's State of computes, nodes and queued jobs (read whole, or
// kept between passes by a View), the scheduler's view of a queued job,
// the block budgets that demote a user's jobs, and the Placer that starts
// an attempt on the nodes a pass or a hand-on chose. The service package
// links it; it reaches the store through store.Tx only.
package scheduling

import (
	"strings"

	"github.com/shoal-ml/shoal/decide/autoscaler"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/quota"
	"github.com/shoal-ml/shoal/store"
)

// ClusterInfo is what one pass knows of a cluster.
type ClusterInfo struct {
	Compute *compute.Compute
	Nodes   []*node.Node
}

// State is one consistent read of computes, nodes and queued jobs.
type State struct {
	Clusters map[string]*ClusterInfo // by ComputeKey
	// all are the nodes read, by ID (Node); byID indexes them once a
	// pass first asks for one by ID. Most passes never do: a map of
	// 10,000 nodes built for each was most of what a pass allocated.
	all  []*node.Node
	byID map[string]*node.Node
	// Queued are the queued jobs the pass read: the heads of the queues
	// (Partial). A pass that read the queue one compute at a time
	// (EachComputeQueue) keeps
	// of each compute's jobs only the first of its largest gang
	// (LargestGang): what the autoscaler reads of them beside Demand.
	Queued []store.QueuedJobRef
	// demand is the node demand of each compute's whole queue.
	Demand map[string]int
	// partial is true when queued holds only the heads of each queue.
	Partial bool
	// reserved is the quota instances' own nodes hold; stopped lists the
	// instances that hold quota without a node.
	Reserved []autoscaler.Reservation
	Stopped  []*compute.Compute
	// wsQuotas are the workspaces' own family limits (workspace_quota.go).
	WsQuotas map[string]map[string]int
}

// ReplaceNode puts n in st in place of the record of its ID, in the
// nodes and in its cluster's list, without modifying the old record
// (shared with a View).
func (st *State) ReplaceNode(n *node.Node) {
	old := st.Node(n.ID)
	if old == nil {
		return
	}
	st.byID[n.ID] = n
	if ci := st.Clusters[compute.ComputeKey(n.Workspace, n.Compute)]; ci != nil {
		for i, m := range ci.Nodes {
			if m == old {
				ci.Nodes[i] = n
				break
			}
		}
	}
}

// Node returns the node of that ID as st holds it (nil: none).
func (st *State) Node(id string) *node.Node {
	if st.byID == nil {
		st.byID = make(map[string]*node.Node, len(st.all))
		for _, n := range st.all {
			st.byID[n.ID] = n
		}
	}
	return st.byID[id]
}

// AllNodes returns every node st holds, in the order read, as st holds
// them now (ReplaceNode's records in place of those they replaced). The
// slice may be st's own: the caller must not modify it.
func (st *State) AllNodes() []*node.Node {
	if st.byID == nil {
		return st.all
	}
	out := make([]*node.Node, len(st.all))
	for i, n := range st.all {
		out[i] = st.byID[n.ID]
	}
	return out
}

// ReadPlacementState reads what a placement pass needs: every compute and
// node, and only the first jobs of each queue (as many as that compute has
// free nodes, at least one), which is all that can start now. A long queue
// then costs a placement pass almost nothing.
func ReadPlacementState(tx store.Tx) (*State, error) {
	st, err := ReadNodes(tx)
	if err != nil {
		return nil, err
	}
	return st, ReadHeads(tx, st)
}

// ReadPlacementState is ReadPlacementState with the computes and nodes
// from the view.
func (v *View) ReadPlacementState(tx store.Tx) (*State, error) {
	st, err := v.ReadNodes(tx)
	if err != nil {
		return nil, err
	}
	return st, ReadHeads(tx, st)
}

// ReadPlacementStateFor is ReadPlacementState with the jobs of only the
// computes in keys (by ComputeKey): what a pass for a new job of one of
// them schedules. The clusters and the demand are every compute's.
func (v *View) ReadPlacementStateFor(tx store.Tx, keys map[string]bool) (*State, error) {
	st, err := v.ReadNodes(tx)
	if err != nil {
		return nil, err
	}
	if err := ReadHeads(tx, st); err != nil {
		return nil, err
	}
	mine := st.Queued[:0]
	for _, j := range st.Queued {
		if keys[compute.ComputeKey(j.Workspace, j.ComputeKey)] {
			mine = append(mine, j)
		}
	}
	st.Queued = mine
	return st, nil
}

// ReadHeads reads the heads of every queue into st.
func ReadHeads(tx store.Tx, st *State) error {
	var err error
	// Free nodes are counted for the computes with queued jobs alone (the
	// store asks for those): a fleet of 10,000 idle nodes with no queue
	// of its own cost every pass a look at each node, about a millisecond
	// of the pass's core spent waiting on memory.
	st.Queued, st.Demand, err = tx.ListQueueHeads(func(key string) int {
		free := 0
		if ci := st.Clusters[key]; ci != nil {
			for _, n := range ci.Nodes {
				if NodeFree(n) {
					free++
				}
			}
		}
		return free
	})
	st.Partial = true
	return err
}

// EachComputeQueue reads the queue one compute at a time and each
// compute's queue a page at a time (store.Tx.PageComputeQueue), so that a
// pass over the whole queue holds one page of one compute's queue, not
// every queue: for each compute with queued jobs, in the order of their
// keys (the order of the scheduler's placements), it hands fn the
// compute's key and its queue in queue order, page jobs at a time, first
// set on the compute's first page. fn must not keep a page nor use tx.
// It sets st.Demand from what it read.
func EachComputeQueue(tx store.Tx, st *State, page int, fn func(key string, queue []store.QueuedJobRef, first bool) error) error {
	keys, err := tx.ListQueueComputes()
	if err != nil {
		return err
	}
	st.Demand = map[string]int{}
	for _, k := range keys {
		ws, comp, _ := strings.Cut(k, "/")
		key := ""
		err := tx.PageComputeQueue(ws, comp, page, func(queue []store.QueuedJobRef) error {
			first := key == ""
			if first {
				key = compute.ComputeKey(queue[0].Workspace, queue[0].ComputeKey)
			}
			for _, j := range queue {
				st.Demand[key] += j.InstanceCount
			}
			return fn(key, queue, first)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// QueuePage is how many queued jobs a pass over one compute's whole
// queue holds at a time (EachComputeQueue): small beside 100,000, large
// enough that its reads and scheduler calls stay few.
const QueuePage = 4096

// Largest keeps, of a queue read a page at a time, the first job that
// needs the most nodes: the autoscaler sizes a cluster of one-image
// nodes by its largest gang, so a pass keeps that job of each queue, not
// the queue.
type Largest struct {
	job store.QueuedJobRef
	ok  bool
}

// Add considers the jobs of page whose index keep is true for (nil: all),
// the page coming after those added before it.
func (l *Largest) Add(page []store.QueuedJobRef, keep func(i int) bool) {
	for i := range page {
		if keep != nil && !keep(i) {
			continue
		}
		if !l.ok || page[i].InstanceCount > l.job.InstanceCount {
			l.job, l.ok = page[i], true
		}
	}
}

// Job returns the job kept; false if none was.
func (l *Largest) Job() (store.QueuedJobRef, bool) { return l.job, l.ok }

// LargestGang returns, of the jobs of queue whose index keep is true for
// (nil: all), the first that needs the most nodes; false if there is
// none.
func LargestGang(queue []store.QueuedJobRef, keep func(i int) bool) (store.QueuedJobRef, bool) {
	var l Largest
	l.Add(queue, keep)
	return l.Job()
}

// ReadScaleState reads what the autoscaler plans from when no placement
// pass handed it a state: the clusters and their nodes, each compute's
// demand, and of its queue the largest gang, reading the queue one
// compute at a time.
func ReadScaleState(tx store.Tx) (*State, error) {
	st, err := ReadNodes(tx)
	if err != nil {
		return nil, err
	}
	var largest Largest
	flush := func() {
		if j, ok := largest.Job(); ok {
			st.Queued = append(st.Queued, j)
		}
		largest = Largest{}
	}
	err = EachComputeQueue(tx, st, QueuePage, func(_ string, queue []store.QueuedJobRef, first bool) error {
		if first {
			flush() // the compute before this one
		}
		largest.Add(queue, nil)
		return nil
	})
	flush()
	return st, err
}

// ReadNodes reads the clusters and their nodes.
func ReadNodes(tx store.Tx) (*State, error) {
	cs, err := readComputes(tx)
	if err != nil {
		return nil, err
	}
	nodes, err := tx.ListNodes(node.NodeFilter{})
	if err != nil {
		return nil, err
	}
	return cs.state(nodes), nil
}

// computeSet is what a pass reads of the workspaces: their computes (by
// ComputeKey) and quotas. A View keeps one between passes.
type computeSet struct {
	computes map[string]*compute.Compute
	wsQuotas map[string]map[string]int
}

// readComputes reads every workspace's computes and quotas.
func readComputes(tx store.Tx) (computeSet, error) {
	cs := computeSet{computes: map[string]*compute.Compute{}, wsQuotas: map[string]map[string]int{}}
	workspaces, err := tx.ListWorkspaces()
	if err != nil {
		return cs, err
	}
	for _, ws := range workspaces {
		q, err := tx.GetWorkspaceQuotas(ws.Name)
		if err != nil {
			return cs, err
		}
		if len(q) > 0 {
			cs.wsQuotas[strings.ToLower(ws.Name)] = q
		}
		// Clusters, and instances: an instance's jobs run on its job slots,
		// which scale like a cluster's nodes.
		computes, err := tx.ListComputes(compute.ComputeFilter{Workspace: ws.Name})
		if err != nil {
			return cs, err
		}
		for _, c := range computes {
			cs.computes[compute.ComputeKey(c.Workspace, c.Name)] = c
		}
	}
	return cs, nil
}

// state builds a pass's State of the computes and nodes (ordered by ID).
// The State's maps and slices are its own; the computes and nodes they
// point to are shared with a View and never modified (Place replaces the
// nodes it changes).
func (cs computeSet) state(nodes []*node.Node) *State {
	st := &State{Clusters: make(map[string]*ClusterInfo, len(cs.computes)), all: nodes, WsQuotas: cs.wsQuotas}
	for key, c := range cs.computes {
		st.Clusters[key] = &ClusterInfo{Compute: c}
	}
	withNode := map[string]bool{}
	// Each node's cluster, by its names: a node's key built for each node
	// was a string allocated per node and pass (10,000 at full size, half
	// of a pass's allocations). Nodes in ID order come a cluster at a time.
	var lastWS, lastComp string
	var last *ClusterInfo
	for _, n := range nodes {
		if n.Role == node.NodeRoleInstance {
			// An instance's own node holds quota outside any cluster.
			withNode[compute.ComputeKey(n.Workspace, n.Compute)] = true
			if n.Holds() {
				st.Reserved = append(st.Reserved, autoscaler.Reservation{Location: n.Location, Workspace: n.Workspace, Family: n.Family, LowPriority: n.LowPriority, VCPUs: n.VCPUs})
			}
			continue
		}
		if last == nil || n.Workspace != lastWS || n.Compute != lastComp {
			lastWS, lastComp = n.Workspace, n.Compute
			last = st.Clusters[compute.ComputeKey(n.Workspace, n.Compute)]
		}
		if last != nil {
			last.Nodes = append(last.Nodes, n)
		}
	}
	// A stopped instance keeps its quota, unless release_quota_on_stop.
	for key, ci := range st.Clusters {
		if c := ci.Compute; c.IsInstance() && !withNode[key] && quota.HoldsStopped(c) {
			st.Stopped = append(st.Stopped, c)
		}
	}
	return st
}

// NodeFree reports whether a node can take work now: idle, not
// draining, and done with its cluster's pre-pulls.
func NodeFree(n *node.Node) bool {
	return n.State == node.NodeIdle && !n.Draining && n.CurrentAttemptID == "" && len(n.PullingImages) == 0
}

// MaxNodes is how many nodes a compute may have: a cluster's
// max_instances, an instance's job slots.
func MaxNodes(c *compute.Compute) int {
	if c.IsInstance() {
		if c.MaxConcurrentJobs != nil {
			return *c.MaxConcurrentJobs
		}
		return 1
	}
	return *c.MaxInstances
}

// FallbackNode reports whether n is a dedicated node of a low-priority
// cluster: one its tier fallback added, which jobs use only when no
// low-priority node is free.
func FallbackNode(c *compute.Compute, n *node.Node) bool {
	return c != nil && c.Tier == compute.TierLowPriority && !n.LowPriority
}
