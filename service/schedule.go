package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/autoscaler"
	"github.com/shoal-ml/shoal/scheduler"
)

// clusterInfo is what one pass knows of a cluster.
type clusterInfo struct {
	compute *shoal.Compute
	nodes   []*shoal.Node
}

// state is one consistent read of computes, nodes and queued jobs.
type state struct {
	clusters map[string]*clusterInfo // by computeKey
	nodes    map[string]*shoal.Node
	queued   []shoal.QueuedJobRef
	// demand is the node demand of each compute's whole queue.
	demand map[string]int
	// partial is true when queued holds only the heads of each queue.
	partial bool
	// reserved is the quota instances' own nodes hold; stopped lists the
	// instances that hold quota without a node.
	reserved []autoscaler.Reservation
	stopped  []*shoal.Compute
	// wsQuotas are the workspaces' own family limits (workspace_quota.go).
	wsQuotas map[string]map[string]int
}

// readPlacementState reads what a placement pass needs: every compute and
// node, and only the first jobs of each queue (as many as that compute has
// free nodes, at least one), which is all that can start now. A long queue
// then costs a placement pass almost nothing.
func readPlacementState(tx shoal.Tx) (*state, error) {
	st, err := readNodes(tx)
	if err != nil {
		return nil, err
	}
	free := map[string]int{}
	for key, ci := range st.clusters {
		for _, n := range ci.nodes {
			if nodeFree(n) {
				free[key]++
			}
		}
	}
	st.queued, st.demand, err = tx.ListQueueHeads(func(key string) int { return free[key] })
	st.partial = true
	return st, err
}

// readState reads computes, nodes and the whole queue.
func readState(tx shoal.Tx) (*state, error) {
	st, err := readNodes(tx)
	if err != nil {
		return nil, err
	}
	st.queued, err = tx.ListQueuedJobRefs()
	st.demand = map[string]int{}
	for _, j := range st.queued {
		st.demand[computeKey(j.Workspace, j.ComputeKey)] += j.InstanceCount
	}
	return st, err
}

// readNodes reads the clusters and their nodes.
func readNodes(tx shoal.Tx) (*state, error) {
	st := &state{clusters: map[string]*clusterInfo{}, nodes: map[string]*shoal.Node{}, wsQuotas: map[string]map[string]int{}}
	workspaces, err := tx.ListWorkspaces()
	if err != nil {
		return nil, err
	}
	for _, ws := range workspaces {
		q, err := readWorkspaceQuotas(tx, ws.Name)
		if err != nil {
			return nil, err
		}
		if len(q) > 0 {
			st.wsQuotas[strings.ToLower(ws.Name)] = q
		}
		// Clusters, and instances: an instance's jobs run on its job slots,
		// which scale like a cluster's nodes.
		computes, err := tx.ListComputes(shoal.ComputeFilter{Workspace: ws.Name})
		if err != nil {
			return nil, err
		}
		for _, c := range computes {
			st.clusters[computeKey(c.Workspace, c.Name)] = &clusterInfo{compute: c}
		}
	}
	nodes, err := tx.ListNodes(shoal.NodeFilter{})
	if err != nil {
		return nil, err
	}
	withNode := map[string]bool{}
	for _, n := range nodes {
		st.nodes[n.ID] = n
		if n.Role == shoal.NodeRoleInstance {
			// An instance's own node holds quota outside any cluster.
			withNode[computeKey(n.Workspace, n.Compute)] = true
			if n.Holds() {
				st.reserved = append(st.reserved, autoscaler.Reservation{Location: n.Location, Workspace: n.Workspace, Family: n.Family, LowPriority: n.LowPriority, VCPUs: n.VCPUs})
			}
			continue
		}
		if ci := st.clusters[computeKey(n.Workspace, n.Compute)]; ci != nil {
			ci.nodes = append(ci.nodes, n)
		}
	}
	// A stopped instance keeps its quota, unless release_quota_on_stop.
	for key, ci := range st.clusters {
		if c := ci.compute; c.IsInstance() && !withNode[key] && instanceHoldsQuotaStopped(c) {
			st.stopped = append(st.stopped, c)
		}
	}
	return st, nil
}

// nodeFree reports whether a node can take work now.
func nodeFree(n *shoal.Node) bool {
	return n.State == shoal.NodeIdle && !n.Draining && n.CurrentAttemptID == ""
}

// schedule places queued jobs on free nodes and records why the others
// wait. It returns the state as it is after the placements, which the
// autoscaler plans from in the same pass.
//
// The state is read and the placement decided in a read-only transaction;
// only the placements take the write lock, each re-checked (job still
// queued, nodes still free) since the world may have moved in between.
// Holding the single writer while reading every node and the whole queue
// would stall every agent's report behind each pass.
//
// A full pass reads the whole queue and refreshes every waiting job's
// reason; a partial one reads only the heads of the queues and leaves the
// reasons to the next full pass.
func (c *Controller) schedule(ctx context.Context, full bool) (*state, error) {
	s := c.s
	sys := shoal.WithPrincipal(ctx, schedulerPrincipal)
	blocked, err := c.blockedUserJobs(ctx)
	if err != nil {
		return nil, err
	}
	if len(blocked) > 0 {
		// The heads of the queues, as a partial pass reads them, may be
		// a blocked user's jobs alone: the others behind them must be in
		// the snapshot to go first.
		full = true
	}
	var st *state
	err = s.store.View(sys, func(tx shoal.Tx) error {
		var err error
		if full {
			st, err = readState(tx)
		} else {
			st, err = readPlacementState(tx)
		}
		return err
	})
	if err != nil || len(st.queued) == 0 {
		return st, err
	}
	snap := scheduler.Snapshot{Clusters: map[string]scheduler.ClusterState{}}
	for key, ci := range st.clusters {
		block := c.scaleBlock(key)
		cs := scheduler.ClusterState{MaxInstances: maxNodes(ci.compute), QuotaBlocked: block.reason, BlockedBy: block.blockedBy(), Unavailable: unavailable(ci.compute)}
		for _, n := range ci.nodes {
			switch {
			case n.State == shoal.NodePreparing:
				cs.Provisioning++
			case n.CurrentAttemptID != "":
				cs.Busy++
			}
			sn := scheduler.Node{ID: n.ID, Cluster: key, Free: nodeFree(n), Fallback: fallbackNode(ci.compute, n)}
			if n.IdleSince != nil {
				sn.IdleSince = *n.IdleSince
			}
			snap.Nodes = append(snap.Nodes, sn)
		}
		snap.Clusters[key] = cs
	}
	refs := map[string]shoal.QueuedJobRef{}
	for _, j := range st.queued {
		key := computeKey(j.Workspace, j.ComputeKey)
		if ci := st.clusters[key]; ci != nil && ci.compute.ProvisioningState == shoal.ProvisioningDeleting {
			continue // it can never run: ReconcileComputes fails it
		}
		id := j.Workspace + "/" + j.Name
		refs[id] = j
		_, demoted := blocked[id]
		snap.Jobs = append(snap.Jobs, queueJob(j, demoted))
	}
	res := scheduler.Schedule(snap)
	// Reasons change on nearly every pass ("behind 3 jobs", "behind 2
	// jobs"): they are served from memory, and only a change of kind
	// becomes an event, so a long queue costs no writes per pass.
	var changed []string
	if !st.partial {
		userBudgetReasons(blocked, res.Waiting)
		for id, r := range res.Waiting {
			if s.reasons.setCode(id, string(r.Code)) {
				changed = append(changed, id)
			}
		}
		s.reasons.replace(res.Waiting)
	}
	var wake []string
	if len(res.Placements) > 0 || len(changed) > 0 {
		err = s.store.Update(sys, func(tx shoal.Tx) error {
			wake = wake[:0]
			for _, p := range res.Placements {
				ok, err := s.place(sys, tx, refs[p.JobID], p.NodeIDs, st)
				if err != nil {
					return err
				}
				if ok {
					wake = append(wake, p.NodeIDs...)
					ref := refs[p.JobID]
					st.demand[computeKey(ref.Workspace, ref.ComputeKey)] -= ref.InstanceCount
				}
			}
			for _, id := range changed {
				ref := refs[id]
				if err := appendJobEvent(sys, tx, &shoal.Job{Workspace: ref.Workspace, JobSpec: shoal.JobSpec{Name: ref.Name}}, "waiting", res.Waiting[id].Message); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	s.nodes.wake(wake...)
	waiting := st.queued[:0]
	for _, j := range st.queued {
		if _, ok := res.Waiting[j.Workspace+"/"+j.Name]; ok {
			waiting = append(waiting, j)
		}
	}
	st.queued = waiting
	return st, nil
}

// place starts a job on nodes if the job is still queued and the nodes
// still free; otherwise it leaves both for the next pass. It updates the
// node records of st so the autoscaler sees the placement.
func (s *Services) place(ctx context.Context, tx shoal.Tx, ref shoal.QueuedJobRef, nodeIDs []string, st *state) (bool, error) {
	j, err := tx.GetJob(ref.Workspace, ref.Name)
	if err != nil {
		return false, err
	}
	if j.Status != shoal.JobQueued {
		return false, nil
	}
	nodes := make([]*shoal.Node, len(nodeIDs))
	for i, id := range nodeIDs {
		n, err := tx.GetNode(id)
		if shoal.ErrorCode(err) == shoal.ENOTFOUND {
			return false, nil
		} else if err != nil {
			return false, err
		}
		if !nodeFree(n) {
			return false, nil
		}
		nodes[i] = n
	}
	if err := s.startAttempt(ctx, tx, j, nodes); err != nil {
		return false, err
	}
	for _, n := range nodes {
		if old := st.nodes[n.ID]; old != nil {
			*old = *n
		}
	}
	return true, nil
}

// startAttempt creates the next attempt of j on nodes (rank i on nodes[i])
// and assigns the nodes; their agents learn of it on their next sync.
func (s *Services) startAttempt(ctx context.Context, tx shoal.Tx, j *shoal.Job, nodes []*shoal.Node) error {
	now := tx.Now()
	a := &shoal.Attempt{
		ID: newID(s.cfg.Random, "att-"), Workspace: j.Workspace, JobName: j.Name,
		Number: j.AttemptCount + 1, Status: shoal.AttemptPreparing, CreatedOn: now,
		MasterAddr: nodes[0].PrivateIPAddress, MasterPort: nodes[0].Port,
	}
	for i, n := range nodes {
		a.Ranks = append(a.Ranks, &shoal.RankStatus{Rank: i, NodeID: n.ID, Status: shoal.AttemptPreparing})
		n.State, n.CurrentAttemptID, n.CurrentJobName, n.CurrentRank, n.IdleSince = shoal.NodeRunning, a.ID, j.Name, i, nil
		n.Version++
		if err := tx.UpdateNode(n); err != nil {
			return err
		}
	}
	if err := tx.InsertAttempt(a); err != nil {
		return err
	}
	j.AttemptCount, j.CurrentAttemptID = a.Number, a.ID
	j.Status = shoal.JobPreparing
	j.StatusReason = fmt.Sprintf("attempt %d preparing on %s", a.Number, rankNodes(a))
	if c, err := tx.GetCompute(j.Workspace, j.Compute); err == nil {
		for _, n := range nodes {
			if fallbackNode(c, n) {
				j.StatusReason += fmt.Sprintf(" (dedicated: no low-priority node was free; tier_fallback after %s)", c.TierFallback.Duration())
				break
			}
		}
	}
	j.Version++
	if err := tx.UpdateJob(j); err != nil {
		return err
	}
	return appendJobEvent(ctx, tx, j, "scheduled", j.StatusReason)
}

// scaleBlock returns why the last autoscaler pass could not grow the
// cluster key, or the zero scaleBlock.
func (c *Controller) scaleBlock(key string) scaleBlock {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.blocked[key]
}

// maxNodes is how many nodes a compute may have: a cluster's
// max_instances, an instance's job slots.
func maxNodes(c *shoal.Compute) int {
	if c.IsInstance() {
		if c.MaxConcurrentJobs != nil {
			return *c.MaxConcurrentJobs
		}
		return 1
	}
	return *c.MaxInstances
}

// unavailable says why a compute takes no jobs now: an instance runs jobs
// only while it runs; a job on a stopped one waits for its user to start
// it (it does not start the instance).
func unavailable(c *shoal.Compute) string {
	if !c.IsInstance() || c.Instance == nil {
		return ""
	}
	switch c.Instance.State {
	case shoal.InstanceRunning, shoal.InstanceJobRunning:
		return ""
	case shoal.InstanceStopped:
		return fmt.Sprintf("instance stopped: start it (shoal compute start -n %s)", c.Name)
	}
	return fmt.Sprintf("instance %s: jobs start once it is Running", c.Instance.State)
}

// fallbackNode reports whether n is a dedicated node of a low-priority
// cluster: one its tier fallback added, which jobs use only when no
// low-priority node is free.
func fallbackNode(c *shoal.Compute, n *shoal.Node) bool {
	return c != nil && c.Tier == shoal.TierLowPriority && !n.LowPriority
}
