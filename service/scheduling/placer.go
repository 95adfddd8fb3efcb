package scheduling

import (
	"context"
	"fmt"
	"io"

	"github.com/shoal-ml/shoal/decide/jobrun"
	"github.com/shoal-ml/shoal/decide/scalewindow"
	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// schedulerPrincipal is who starts the attempts placement decides.
var schedulerPrincipal = identity.SystemPrincipal("scheduler")

// Placer starts the attempts placement decides: a controller pass's
// (Place) and a rank report's hand-on (HandOn).
type Placer struct {
	// Random is the source of attempt IDs.
	Random io.Reader
	// Catalog is the catalog of locations (NodeImages).
	Catalog *catalog.Catalog
	// Budgets are the block budgets found reached.
	Budgets *BudgetGate
	// AppendEvents records the job events a step asks for.
	AppendEvents func(ctx context.Context, tx store.Tx, j *job.Job, evs []jobrun.JobEvent) error
}

// Place starts a job on nodes if the job is still queued and the nodes
// still free, and returns the nodes as written; otherwise it leaves both
// for the next pass and returns none. Its caller hands the nodes to its
// State (State.ReplaceNode: the records a State holds may be shared with
// a View) once the transaction has committed, so that the autoscaler sees
// the placement, and only a placement that was written: a transaction
// run again (store.Store.Update) may not place the job again.
func (s *Placer) Place(ctx context.Context, tx store.Tx, ref store.QueuedJobRef, nodeIDs []string) ([]*node.Node, error) {
	j, err := tx.GetJob(ref.Workspace, ref.Name)
	if err != nil {
		return nil, err
	}
	if j.Status != job.JobQueued {
		return nil, nil
	}
	nodes := make([]*node.Node, len(nodeIDs))
	for i, id := range nodeIDs {
		n, err := tx.GetNode(id)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return nil, nil
		} else if err != nil {
			return nil, err
		}
		if !NodeFree(n) {
			return nil, nil
		}
		nodes[i] = n
	}
	if _, err := s.startAttempt(ctx, tx, j, nodes); err != nil {
		return nil, err
	}
	return nodes, nil
}

// startAttempt creates the next attempt of j on nodes (rank i on nodes[i])
// and assigns the nodes; their agents learn of it on their next sync. It
// returns the attempt as written (j too is left as written).
func (s *Placer) startAttempt(ctx context.Context, tx store.Tx, j *job.Job, nodes []*node.Node) (*job.Attempt, error) {
	now := tx.Now()
	a := &job.Attempt{
		ID: core.NewID(s.Random, "att-"), Workspace: j.Workspace, JobName: j.Name,
		Number: j.AttemptCount + 1, Status: job.AttemptPreparing, CreatedOn: now,
		MasterAddr: nodes[0].PrivateIPAddress, MasterPort: nodes[0].Port,
	}
	for i, n := range nodes {
		a.Ranks = append(a.Ranks, &job.RankStatus{Rank: i, NodeID: n.ID, Status: job.AttemptPreparing})
		n.State, n.CurrentAttemptID, n.CurrentJobName, n.CurrentRank, n.IdleSince = node.NodeRunning, a.ID, j.Name, i, nil
		n.Version++
		if err := tx.UpdateNode(n); err != nil {
			return nil, err
		}
	}
	if err := tx.InsertAttempt(a); err != nil {
		return nil, err
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
		return nil, err
	}
	*j = out.Job
	j.Version++
	if err := tx.UpdateJob(j); err != nil {
		return nil, err
	}
	return a, s.AppendEvents(ctx, tx, j, out.Events)
}

// Started is what a hand-on started: the attempt and its job as written,
// so that the caller builds the node's task without reading them again.
type Started struct {
	// Attempt is the attempt inserted, its rank 0 on the node.
	Attempt *job.Attempt
	// Job is the job it belongs to, as written (Preparing).
	Job *job.Job
}

// HandOn gives a node that has just finished its work the job a pass
// would give it, at once and in the same transaction: a busy cluster
// would otherwise wait a pass per job. It reads only the head of the
// node's compute's queue, which decides when the head is not demoted (no
// job behind it goes first) and the scheduler then places it or not (a
// gang waits for a pass, which sees every free node). A demoted head
// leaves the node to the next pass, which reads the jobs behind it.
//
// n is the node as its caller left it, freed in memory: HandOn writes it
// when it places a job on it (returning what it started) and otherwise
// leaves the write to the caller (nil, nil), so that a report that frees
// a node and hands it on writes the node once.
func (s *Placer) HandOn(ctx context.Context, tx store.Tx, n *node.Node) (*Started, error) {
	if !NodeFree(n) {
		return nil, nil
	}
	c, err := tx.GetCompute(n.Workspace, n.Compute)
	if err != nil || c.ProvisioningState == compute.ProvisioningDeleting {
		return nil, nil
	}
	if b, ok := scalewindow.Of(c, tx.Now()); ok && b.Window != nil {
		// A scale window caps the cluster: the pass, which counts its
		// nodes against the cap, decides whether this one takes work.
		return nil, nil
	}
	// The head and its job in one statement.
	head, j, err := tx.QueueHeadJob(n.Workspace, n.Compute)
	if err != nil || head == nil || j.Status != job.JobQueued {
		return nil, err
	}
	if demoted, err := s.Budgets.Demoted(tx, j); err != nil || demoted {
		return nil, err
	}
	key := compute.ComputeKey(n.Workspace, n.Compute)
	sn := scheduler.Node{ID: n.ID, Cluster: key, Free: true, Fallback: FallbackNode(c, n), Image: n.Image}
	if n.IdleSince != nil {
		sn.IdleSince = *n.IdleSince
	}
	res := scheduler.Schedule(scheduler.Snapshot{
		Nodes:    []scheduler.Node{sn},
		Jobs:     []scheduler.Job{QueueJob(*head, false)},
		Clusters: map[string]scheduler.ClusterState{key: {MaxInstances: MaxNodes(c), NodeImages: NodeImages(s.Catalog, c)}},
	})
	if len(res.Placements) == 0 {
		return nil, nil
	}
	ctx = identity.WithPrincipal(ctx, schedulerPrincipal)
	a, err := s.startAttempt(ctx, tx, j, []*node.Node{n})
	if err != nil {
		return nil, err
	}
	return &Started{Attempt: a, Job: j}, nil
}
