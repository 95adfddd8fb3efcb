package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/decide/autoscaler"
	"github.com/shoal-ml/shoal/decide/jobrun"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
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
	Nodes    map[string]*node.Node
	Queued   []store.QueuedJobRef
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

// ReadPlacementState reads what a placement pass needs: every compute and
// node, and only the first jobs of each queue (as many as that compute has
// free nodes, at least one), which is all that can start now. A long queue
// then costs a placement pass almost nothing.
func ReadPlacementState(tx store.Tx) (*State, error) {
	st, err := ReadNodes(tx)
	if err != nil {
		return nil, err
	}
	return st, readHeads(tx, st)
}

// ReadPlacementState is ReadPlacementState with the computes and nodes
// from the view.
func (v *View) ReadPlacementState(tx store.Tx) (*State, error) {
	st, err := v.ReadNodes(tx)
	if err != nil {
		return nil, err
	}
	return st, readHeads(tx, st)
}

// ReadPlacementStateFor is ReadPlacementState with the jobs of only the
// computes in keys (by ComputeKey): what a pass for a new job of one of
// them schedules. The clusters and the demand are every compute's.
func (v *View) ReadPlacementStateFor(tx store.Tx, keys map[string]bool) (*State, error) {
	st, err := v.ReadNodes(tx)
	if err != nil {
		return nil, err
	}
	if err := readHeads(tx, st); err != nil {
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

// ReadState is ReadState with the computes and nodes from the view.
func (v *View) ReadState(tx store.Tx) (*State, error) {
	st, err := v.ReadNodes(tx)
	if err != nil {
		return nil, err
	}
	return st, readQueue(tx, st)
}

// readHeads reads the heads of every queue into st.
func readHeads(tx store.Tx, st *State) error {
	var err error
	free := map[string]int{}
	for key, ci := range st.Clusters {
		for _, n := range ci.Nodes {
			if NodeFree(n) {
				free[key]++
			}
		}
	}
	st.Queued, st.Demand, err = tx.ListQueueHeads(func(key string) int { return free[key] })
	st.Partial = true
	return err
}

// ReadState reads computes, nodes and the whole queue.
func ReadState(tx store.Tx) (*State, error) {
	st, err := ReadNodes(tx)
	if err != nil {
		return nil, err
	}
	return st, readQueue(tx, st)
}

// readQueue reads the whole queue into st.
func readQueue(tx store.Tx, st *State) error {
	var err error
	st.Queued, err = tx.ListQueuedJobRefs()
	st.Demand = map[string]int{}
	for _, j := range st.Queued {
		st.Demand[compute.ComputeKey(j.Workspace, j.ComputeKey)] += j.InstanceCount
	}
	return err
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
	st := &State{Clusters: make(map[string]*ClusterInfo, len(cs.computes)), Nodes: make(map[string]*node.Node, len(nodes)), WsQuotas: cs.wsQuotas}
	for key, c := range cs.computes {
		st.Clusters[key] = &ClusterInfo{Compute: c}
	}
	withNode := map[string]bool{}
	for _, n := range nodes {
		st.Nodes[n.ID] = n
		if n.Role == node.NodeRoleInstance {
			// An instance's own node holds quota outside any cluster.
			withNode[compute.ComputeKey(n.Workspace, n.Compute)] = true
			if n.Holds() {
				st.Reserved = append(st.Reserved, autoscaler.Reservation{Location: n.Location, Workspace: n.Workspace, Family: n.Family, LowPriority: n.LowPriority, VCPUs: n.VCPUs})
			}
			continue
		}
		if ci := st.Clusters[compute.ComputeKey(n.Workspace, n.Compute)]; ci != nil {
			ci.Nodes = append(ci.Nodes, n)
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

// Place starts a job on nodes if the job is still queued and the nodes
// still free; otherwise it leaves both for the next pass. It updates the
// node records of st so the autoscaler sees the placement (replacing
// them: the records a State holds may be shared with a View).
func (s *Services) Place(ctx context.Context, tx store.Tx, ref store.QueuedJobRef, nodeIDs []string, st *State) (bool, error) {
	j, err := tx.GetJob(ref.Workspace, ref.Name)
	if err != nil {
		return false, err
	}
	if j.Status != job.JobQueued {
		return false, nil
	}
	nodes := make([]*node.Node, len(nodeIDs))
	for i, id := range nodeIDs {
		n, err := tx.GetNode(id)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return false, nil
		} else if err != nil {
			return false, err
		}
		if !NodeFree(n) {
			return false, nil
		}
		nodes[i] = n
	}
	if err := s.startAttempt(ctx, tx, j, nodes); err != nil {
		return false, err
	}
	for _, n := range nodes {
		st.replaceNode(n)
	}
	return true, nil
}

// startAttempt creates the next attempt of j on nodes (rank i on nodes[i])
// and assigns the nodes; their agents learn of it on their next sync.
func (s *Services) startAttempt(ctx context.Context, tx store.Tx, j *job.Job, nodes []*node.Node) error {
	now := tx.Now()
	a := &job.Attempt{
		ID: core.NewID(s.cfg.Random, "att-"), Workspace: j.Workspace, JobName: j.Name,
		Number: j.AttemptCount + 1, Status: job.AttemptPreparing, CreatedOn: now,
		MasterAddr: nodes[0].PrivateIPAddress, MasterPort: nodes[0].Port,
	}
	for i, n := range nodes {
		a.Ranks = append(a.Ranks, &job.RankStatus{Rank: i, NodeID: n.ID, Status: job.AttemptPreparing})
		n.State, n.CurrentAttemptID, n.CurrentJobName, n.CurrentRank, n.IdleSince = node.NodeRunning, a.ID, j.Name, i, nil
		n.Version++
		if err := tx.UpdateNode(n); err != nil {
			return err
		}
	}
	if err := tx.InsertAttempt(a); err != nil {
		return err
	}
	note := ""
	if c, err := tx.GetCompute(j.Workspace, j.Compute); err == nil {
		for _, n := range nodes {
			if FallbackNode(c, n) {
				note = fmt.Sprintf(" (dedicated: no low-priority node was free; tier_fallback after %s)", c.TierFallback.Duration())
				break
			}
		}
	}
	out, err := jobrun.Step(j, a, jobrun.Event{Kind: jobrun.Start, Reason: note}, now)
	if err != nil {
		return err
	}
	*j = out.Job
	j.Version++
	if err := tx.UpdateJob(j); err != nil {
		return err
	}
	return appendStepEvents(ctx, tx, j, out.Events)
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
