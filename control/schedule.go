package control

import (
	"context"
	"fmt"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/control/accounting"
	"github.com/shoal-ml/shoal/scheduler"
	"github.com/shoal-ml/shoal/service"
)

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
func (c *Controller) schedule(ctx context.Context, full bool) (*service.State, error) {
	s := c.s
	sys := shoal.WithPrincipal(ctx, schedulerPrincipal)
	blocked, err := accounting.BlockedUserJobs(ctx, c.s)
	if err != nil {
		return nil, err
	}
	if len(blocked) > 0 {
		// The heads of the queues, as a partial pass reads them, may be
		// a blocked user's jobs alone: the others behind them must be in
		// the snapshot to go first.
		full = true
	}
	var st *service.State
	err = s.Store().View(sys, func(tx shoal.Tx) error {
		var err error
		if full {
			st, err = service.ReadState(tx)
		} else {
			st, err = service.ReadPlacementState(tx)
		}
		return err
	})
	if err != nil || len(st.Queued) == 0 {
		return st, err
	}
	snap := scheduler.Snapshot{Clusters: map[string]scheduler.ClusterState{}}
	for key, ci := range st.Clusters {
		block := c.scale.Block(key)
		cs := scheduler.ClusterState{MaxInstances: service.MaxNodes(ci.Compute), QuotaBlocked: block.Reason, BlockedBy: block.BlockedBy(), Unavailable: unavailable(ci.Compute)}
		for _, n := range ci.Nodes {
			switch {
			case n.State == shoal.NodePreparing:
				cs.Provisioning++
			case n.CurrentAttemptID != "":
				cs.Busy++
			}
			sn := scheduler.Node{ID: n.ID, Cluster: key, Free: service.NodeFree(n), Fallback: service.FallbackNode(ci.Compute, n)}
			if n.IdleSince != nil {
				sn.IdleSince = *n.IdleSince
			}
			snap.Nodes = append(snap.Nodes, sn)
		}
		snap.Clusters[key] = cs
	}
	refs := map[string]shoal.QueuedJobRef{}
	for _, j := range st.Queued {
		key := shoal.ComputeKey(j.Workspace, j.ComputeKey)
		if ci := st.Clusters[key]; ci != nil && ci.Compute.ProvisioningState == shoal.ProvisioningDeleting {
			continue // it can never run: ReconcileComputes fails it
		}
		id := j.Workspace + "/" + j.Name
		refs[id] = j
		_, demoted := blocked[id]
		snap.Jobs = append(snap.Jobs, service.QueueJob(j, demoted))
	}
	res := scheduler.Schedule(snap)
	// Reasons change on nearly every pass ("behind 3 jobs", "behind 2
	// jobs"): they are served from memory, and only a change of kind
	// becomes an event, so a long queue costs no writes per pass.
	var changed []string
	if !st.Partial {
		userBudgetReasons(blocked, res.Waiting)
		for id, r := range res.Waiting {
			if s.SetReasonCode(id, string(r.Code)) {
				changed = append(changed, id)
			}
		}
		s.ReplaceReasons(res.Waiting)
	}
	var wake []string
	if len(res.Placements) > 0 || len(changed) > 0 {
		err = s.Store().Update(sys, func(tx shoal.Tx) error {
			wake = wake[:0]
			for _, p := range res.Placements {
				ok, err := s.Place(sys, tx, refs[p.JobID], p.NodeIDs, st)
				if err != nil {
					return err
				}
				if ok {
					wake = append(wake, p.NodeIDs...)
					ref := refs[p.JobID]
					st.Demand[shoal.ComputeKey(ref.Workspace, ref.ComputeKey)] -= ref.InstanceCount
				}
			}
			for _, id := range changed {
				ref := refs[id]
				if err := service.AppendJobEvent(sys, tx, &shoal.Job{Workspace: ref.Workspace, JobSpec: shoal.JobSpec{Name: ref.Name}}, "waiting", res.Waiting[id].Message); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	s.WakeNodes(wake...)
	waiting := st.Queued[:0]
	for _, j := range st.Queued {
		if _, ok := res.Waiting[j.Workspace+"/"+j.Name]; ok {
			waiting = append(waiting, j)
		}
	}
	st.Queued = waiting
	return st, nil
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

// userBudgetReasons overrides the reasons of a blocked user's waiting
// jobs: no node is added for them.
func userBudgetReasons(blocked map[string]accounting.BlockedJob, waiting map[string]scheduler.Reason) {
	for id, b := range blocked {
		if _, ok := waiting[id]; ok {
			waiting[id] = scheduler.Reason{Code: scheduler.ReasonBudget, Message: b.Reason + ": no new nodes for this user's jobs until the next period or a higher limit"}
		}
	}
}
