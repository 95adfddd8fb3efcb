// Package placement is the placement pass: it places queued jobs on free
// nodes with the scheduler (scheduler.Schedule, the one policy; a report's
// hand-on of a freed node asks the same one through service.Place's
// callers) and keeps why every other job waits.
package placement

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shoal-ml/shoal/control/accounting"
	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/control/scaling"
	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/live"
)

// Services is what placement needs of the request services.
// *service.Services implements it.
type Services interface {
	loop.Base
	accounting.BudgetReader
	// Place starts a queued job on nodes the scheduler chose.
	Place(ctx context.Context, tx store.Tx, ref store.QueuedJobRef, nodeIDs []string) ([]*node.Node, error)
	// WaitReasons keeps the queued jobs' wait reasons the API shows on
	// every replica.
	WaitReasons() live.WaitReasons
	// WakeNodes wakes the named nodes' agents' long polls.
	WakeNodes(ids ...string)
}

// Blocks says which clusters could not grow and why (the scaling loop's
// findings of its last pass), for the jobs' reasons.
type Blocks interface {
	Block(key string) scaling.Block
}

// Loop is the placement pass.
type Loop struct {
	s      Services
	blocks Blocks
	// view holds the computes and nodes between passes (nil: every pass
	// reads them from the store).
	view *scheduling.View
	// failures holds the jobs whose placement failed (isolate.go).
	failures *loop.Backoff
	// page is how many queued jobs a whole-queue pass holds at a time
	// (scheduling.QueuePage; tests make it small).
	page int
	// waitingHint is how many jobs the last whole-queue pass found
	// waiting: the next one's map of reasons is made that large at once
	// (grown page by page, it ended a third larger than needed, and held
	// its old table beside the new one each time it grew).
	waitingHint atomic.Int64
}

// New returns the placement pass over s, reading the scaling loop's
// blocks and the computes and nodes through view (nil: from the store).
func New(s Services, blocks Blocks, view *scheduling.View) *Loop {
	return &Loop{s: s, blocks: blocks, view: view, failures: loop.NewBackoff(0), page: scheduling.QueuePage}
}

// principal is the scheduler as the events and the audit name it: the
// same as the services' own (service/scheduling/placer.go), so that the record
// does not change with the move.
var principal = identity.SystemPrincipal("scheduler")

// RunOnce places queued jobs on free nodes and records why the others
// wait. It returns the state as it is after the placements, which the
// autoscaler plans from in the same pass.
//
// The state is read and the placement decided in a read-only transaction;
// only the placements are written, each re-checked (job still queued,
// nodes still free) since the world may have moved in between. Reading
// every node and the whole queue in a write would stall every agent's
// report behind each pass (SQLite's single writer, a server's writes one
// batch at a time on PostgreSQL).
//
// A full pass reads the whole queue and refreshes every waiting job's
// reason; a partial one reads only the heads of the queues and leaves the
// reasons to the next full pass.
func (l *Loop) RunOnce(ctx context.Context, now time.Time, full bool) (*scheduling.State, error) {
	p, err := l.Plan(ctx, now, full, nil)
	if err != nil || p == nil {
		return nil, err
	}
	return l.Apply(ctx, p)
}

// RunFor is RunOnce for the queues of the computes in keys alone (by
// ComputeKey): what a job submitted to one of them needs. It reads the
// heads of those queues only and schedules onto those computes' nodes; the
// state it returns holds every cluster (the autoscaler plans the others'
// quota from it) with those queues' jobs.
func (l *Loop) RunFor(ctx context.Context, now time.Time, keys map[string]bool) (*scheduling.State, error) {
	p, err := l.Plan(ctx, now, false, keys)
	if err != nil || p == nil {
		return nil, err
	}
	return l.Apply(ctx, p)
}

// Pass is a placement decided and not yet written: Plan reads and
// schedules (no write), Apply writes. A pass over the whole queue plans
// apart from the placement passes (its read of 100,000 queued jobs must
// not hold them up) and applies when done.
type Pass struct {
	now      time.Time
	st       *scheduling.State
	res      scheduler.Result
	refs     queueRefs
	deleting map[string]scheduler.Reason
	blocked  map[string]accounting.BlockedJob
	// queued is how many jobs the pass read.
	queued int
	// empty: the queue was empty; only the reasons go.
	empty bool
}

// Plan reads the state (the whole queue when full, else the heads of the
// queues, of only the computes in keys when keys is not nil) and decides
// the placements. It writes nothing.
func (l *Loop) Plan(ctx context.Context, now time.Time, full bool, keys map[string]bool) (*Pass, error) {
	s := l.s
	sys := identity.WithPrincipal(ctx, principal)
	blocked, err := accounting.BlockedUserJobs(ctx, l.s)
	if err != nil {
		return nil, err
	}
	if len(blocked) > 0 {
		// The heads of the queues, as a partial pass reads them, may be
		// a blocked user's jobs alone: the others behind them must be in
		// the snapshot to go first.
		full, keys = true, nil
	}
	if full {
		return l.planWhole(sys, now, blocked)
	}
	var st *scheduling.State
	err = s.Store().View(sys, func(tx store.Tx) error {
		var err error
		switch {
		case l.view == nil:
			st, err = scheduling.ReadPlacementState(tx)
		case keys != nil:
			st, err = l.view.ReadPlacementStateFor(tx, keys)
		default:
			st, err = l.view.ReadPlacementState(tx)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	p := &Pass{now: now, st: st, blocked: blocked, queued: len(st.Queued)}
	if len(st.Queued) == 0 {
		p.empty = true
		return p, nil
	}
	snap := scheduler.Snapshot{Clusters: map[string]scheduler.ClusterState{}}
	// The clusters of the jobs read alone: the scheduler places a job on
	// its own cluster's nodes, and a cluster without queued jobs (a fleet
	// of 10,000 idle nodes) added nothing but a copy of each of its nodes
	// to every pass.
	var keyOf computeKeys
	queuedOn := map[string]bool{}
	for _, j := range st.Queued {
		queuedOn[keyOf.get(j.Workspace, j.ComputeKey)] = true
	}
	for key, ci := range st.Clusters {
		if keys != nil && !keys[key] || !queuedOn[key] {
			continue // only these queues' jobs are in the snapshot
		}
		l.addCluster(&snap, key, ci, now)
	}
	// Sized once, and each job's keys built once: over 100,000 queued
	// jobs, the maps' growth and the keys were most of this pass's
	// garbage, and the server's memory rose with it.
	refs := queueRefs{queued: st.Queued, at: make(map[string]int32, len(st.Queued))}
	deleting := map[string]scheduler.Reason{}
	snap.Jobs = make([]scheduler.Job, 0, len(st.Queued))
	for i, j := range st.Queued {
		key := keyOf.get(j.Workspace, j.ComputeKey)
		id := j.Workspace + "/" + j.Name
		refs.at[id] = int32(i)
		if ci := st.Clusters[key]; ci != nil && ci.Compute.ProvisioningState == compute.ProvisioningDeleting {
			// It can never run: ReconcileComputes fails it. Until then its
			// reason says so, not what it waited for before the delete
			// (e.g. "cluster is at max_instances").
			deleting[id] = deletingReason(ci.Compute)
			continue
		}
		_, demoted := blocked[id]
		snap.Jobs = append(snap.Jobs, scheduling.QueueJobKeyed(j, demoted, id, key))
	}
	p.res, p.refs, p.deleting = scheduler.Schedule(snap), refs, deleting
	return p, nil
}

// addCluster adds a cluster's nodes and state to snap.
func (l *Loop) addCluster(snap *scheduler.Snapshot, key string, ci *scheduling.ClusterInfo, now time.Time) {
	block := l.blocks.Block(key)
	noteFrom := ""
	cs := scheduler.ClusterState{MaxInstances: scheduling.MaxNodes(ci.Compute), QuotaBlocked: block.Reason, BlockedBy: block.BlockedBy(), Unavailable: unavailable(ci.Compute),
		NodeImages: scheduling.NodeImages(l.s.Catalog(), ci.Compute)}
	windowBounds(&cs, ci.Compute, now)
	first := len(snap.Nodes)
	// Room for the cluster's nodes at once: grown by append, the
	// snapshot's copies were an eighth of the server's allocation at
	// 10,000 nodes (bench/scale.sh --profile).
	snap.Nodes = slices.Grow(snap.Nodes, len(ci.Nodes))
	for _, n := range ci.Nodes {
		switch {
		case n.State == node.NodePreparing, len(n.PullingImages) > 0:
			// A node pulling its cluster's images is on its way too.
			cs.Provisioning++
			if n.State == node.NodePreparing && n.StateReason != "" && (cs.ProvisioningNote == "" || n.ID < noteFrom) {
				// Its provider's word on why it waits (a pod Pending
				// for capacity); the lowest id's, so that the
				// reason does not flap between passes.
				cs.ProvisioningNote, noteFrom = "node "+n.ID+": "+n.StateReason, n.ID
			}
		case n.CurrentAttemptID != "":
			cs.Busy++
		}
		sn := scheduler.Node{ID: n.ID, Cluster: key, Free: scheduling.NodeFree(n), Fallback: scheduling.FallbackNode(ci.Compute, n), Image: n.Image}
		if n.IdleSince != nil {
			sn.IdleSince = *n.IdleSince
		}
		snap.Nodes = append(snap.Nodes, sn)
	}
	capFreeNodes(snap.Nodes[first:], cs)
	snap.Clusters[key] = cs
}

// planWhole plans a pass over the whole queue one compute at a time and
// a page of each compute's queue at a time (scheduling.EachComputeQueue,
// wholePass): the scheduler places each cluster's queue on that cluster's
// nodes alone, so scheduling the computes one after the other, in the
// order of their keys, decides what one snapshot of every queue did; and
// a strict queue scheduled a page at a time, in queue order, with the
// nodes left free and the blocked head carried from page to page, decides
// what the whole queue at once did (scheduler.ClusterState.Behind). The
// pass holds one page (100,000 queued jobs held at once were 24-30 MB,
// twice: the queue and the scheduler's copy). What it keeps of each
// queue: the reasons of its waiting jobs (the pass's result), the refs of
// the jobs it places, its node demand, and its largest waiting gang,
// which is all the autoscaler reads of the queued jobs (State.Queued).
func (l *Loop) planWhole(ctx context.Context, now time.Time, blocked map[string]accounting.BlockedJob) (*Pass, error) {
	p := &Pass{now: now}
	var w *wholePass
	err := l.s.Store().View(ctx, func(tx store.Tx) error {
		// Each from nothing, should the transaction be run again.
		p.queued = 0
		var err error
		if l.view == nil {
			p.st, err = scheduling.ReadNodes(tx)
		} else {
			p.st, err = l.view.ReadNodes(tx)
		}
		if err != nil {
			return err
		}
		w = newWholePass(l, now, p.st, blocked, int(l.waitingHint.Load()))
		err = scheduling.EachComputeQueue(tx, p.st, l.page, func(key string, page []store.QueuedJobRef, first bool) error {
			yieldIn(ctx)
			p.queued += len(page)
			if first {
				w.finish()
				w.start(key)
			}
			w.add(page)
			return nil
		})
		w.finish()
		return err
	})
	if err != nil {
		return nil, err
	}
	// In queue order, as a queue read whole lists its jobs.
	slices.SortStableFunc(w.largest, func(a, b store.QueuedJobRef) int {
		if a.Priority != b.Priority {
			return cmp.Compare(b.Priority, a.Priority)
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	p.st.Queued = w.largest
	p.res, p.refs = scheduler.Result{Placements: w.placements, Waiting: w.waiting}, w.refs
	l.waitingHint.Store(int64(len(w.waiting)))
	p.empty = p.queued == 0
	return p, nil
}

// join returns the reasons of a and b in one map, the smaller copied into
// the larger: their jobs are of different computes, and a long queue's
// map is not copied (a compute's 100,000 waiting jobs were a second map
// of them while the copy ran).
func join(a, b map[string]scheduler.Reason) map[string]scheduler.Reason {
	if len(a) < len(b) {
		a, b = b, a
	}
	for id, r := range b {
		a[id] = r
	}
	return a
}

// Queued is how many jobs the pass read from the queue.
func (p *Pass) Queued() int { return p.queued }

// Apply writes a planned pass's placements (each re-checked: job still
// queued, nodes still free) and, for a pass over the whole queue, the
// waiting jobs' reasons. It returns the state as it is after the
// placements.
func (l *Loop) Apply(ctx context.Context, p *Pass) (*scheduling.State, error) {
	s := l.s
	sys := identity.WithPrincipal(ctx, principal)
	now, st, res, refs, deleting, blocked := p.now, p.st, p.res, p.refs, p.deleting, p.blocked
	if p.empty {
		// The queue emptied: the reasons of the jobs that waited go.
		var err error
		if !st.Partial {
			err = l.writeReasons(sys, now, map[string]scheduler.Reason{})
		}
		return st, err
	}
	var err error
	// The reasons join the placements' transaction; only those that
	// changed are written (live.Reasons), so a long queue costs few
	// writes per pass, and only a change of code becomes an event.
	var reasons *live.ReasonChanges
	if !st.Partial {
		userBudgetReasons(blocked, res.Waiting)
		for id, r := range deleting {
			res.Waiting[id] = r
		}
		if reasons, err = s.WaitReasons().Plan(sys, now, res.Waiting); err != nil {
			return nil, err
		}
	}
	var wake []string
	if len(res.Placements) > 0 || (reasons != nil && !reasons.Empty()) {
		var placed []string
		var nodes []*node.Node
		err = s.Store().Update(sys, func(tx store.Tx) error {
			// A run again (store.Store.Update) starts over.
			wake, placed, nodes = wake[:0], placed[:0], nodes[:0]
			for _, p := range res.Placements {
				if !l.failures.Due(p.JobID, now) {
					continue // its last placement failed: retried after its wait
				}
				on, err := s.Place(sys, tx, refs.get(p.JobID), p.NodeIDs)
				if err != nil {
					return loop.Context(err, "job %s", p.JobID)
				}
				if on != nil {
					wake = append(wake, p.NodeIDs...)
					placed = append(placed, p.JobID)
					nodes = append(nodes, on...)
				}
			}
			if reasons == nil {
				return nil
			}
			for _, id := range reasons.Changed {
				if err := service.AppendJobEvent(sys, tx, waitingJob(id), "waiting", res.Waiting[id].Message()); err != nil {
					return err
				}
			}
			return reasons.Write(tx)
		})
		if err == nil {
			// The autoscaler sees the nodes taken, and the demand they
			// met is met, once they are written.
			for _, n := range nodes {
				st.ReplaceNode(n)
			}
			for _, id := range placed {
				l.placed(st, refs.get(id))
				l.failures.Succeeded(id)
			}
		}
		if err != nil && len(res.Placements) > 0 {
			// One placement's failure rolled back the others': each
			// again on its own (isolate.go), the reasons with none.
			wake, err = l.applyOneByOne(sys, now, st, res.Placements, refs, reasons, res.Waiting)
		}
		if err != nil {
			return nil, err
		}
	}
	if reasons != nil {
		s.WaitReasons().Committed(reasons)
	}
	s.WakeNodes(wake...)
	// The waiting jobs are compacted in place: refs, which index the
	// same array, are not read after this.
	waiting := st.Queued[:0]
	for _, j := range st.Queued {
		id := j.Workspace + "/" + j.Name
		if _, gone := deleting[id]; gone {
			continue // no demand: its compute is going away
		}
		if _, ok := res.Waiting[id]; ok {
			waiting = append(waiting, j)
		}
	}
	st.Queued = waiting
	return st, nil
}

// unavailable says why a compute takes no jobs now: an instance runs jobs
// only while it runs; a job on a stopped one waits for its user to start
// it (it does not start the instance).
func unavailable(c *compute.Compute) string {
	if !c.IsInstance() || c.Instance == nil {
		return ""
	}
	switch c.Instance.State {
	case compute.InstanceRunning, compute.InstanceJobRunning:
		return ""
	case compute.InstanceStopped:
		return fmt.Sprintf("instance stopped: start it (shoal compute start -n %s)", c.Name)
	}
	return fmt.Sprintf("instance %s: jobs start once it is Running", c.Instance.State)
}

// userBudgetReasons overrides the reasons of a blocked user's waiting
// jobs: no node is added for them.
func userBudgetReasons(blocked map[string]accounting.BlockedJob, waiting map[string]scheduler.Reason) {
	for id, b := range blocked {
		if _, ok := waiting[id]; ok {
			waiting[id] = budgetReason(b)
		}
	}
}

// budgetReason is the reason of a blocked user's waiting job.
func budgetReason(b accounting.BlockedJob) scheduler.Reason {
	return scheduler.NewReason(scheduler.ReasonBudget, b.Reason+": no new nodes for this user's jobs until the next period or a higher limit")
}

// waitingJob is the job a "waiting" event of id ("workspace/name") is
// recorded on: a pass over the whole queue keeps no waiting job's ref
// past its compute's turn, and the event needs no more than the names.
func waitingJob(id string) *job.Job {
	ws, name, _ := strings.Cut(id, "/") // workspace names hold no slash
	return &job.Job{Workspace: ws, JobSpec: job.JobSpec{Name: name}}
}

// writeReasons writes the wait reasons of a pass that placed nothing in a
// transaction of its own.
func (l *Loop) writeReasons(ctx context.Context, now time.Time, reasons map[string]scheduler.Reason) error {
	r := l.s.WaitReasons()
	ch, err := r.Plan(ctx, now, reasons)
	if err != nil {
		return err
	}
	if !ch.Empty() {
		if err := l.s.Store().Update(ctx, ch.Write); err != nil {
			return err
		}
	}
	r.Committed(ch)
	return nil
}

// deletingReason is why a job queued on a compute being deleted waits:
// it does not wait for anything, it fails once the compute controller
// gets to it.
func deletingReason(c *compute.Compute) scheduler.Reason {
	return scheduler.NewReason(scheduler.ReasonDeleting,
		fmt.Sprintf("compute %s is being deleted: this job will not start and fails without running (submit it again to another compute)", c.Name))
}

// computeKeys hands out each (workspace, compute key) pair's ComputeKey
// once: a long queue's jobs are mostly of a few computes.
type computeKeys struct {
	lastWS, lastCK, last string
	m                    map[[2]string]string
}

func (k *computeKeys) get(workspace, computeKey string) string {
	if k.last != "" && workspace == k.lastWS && computeKey == k.lastCK {
		return k.last
	}
	if k.m == nil {
		k.m = map[[2]string]string{}
	}
	key, ok := k.m[[2]string{workspace, computeKey}]
	if !ok {
		key = compute.ComputeKey(workspace, computeKey)
		k.m[[2]string{workspace, computeKey}] = key
	}
	k.lastWS, k.lastCK, k.last = workspace, computeKey, key
	return key
}

// queueRefs finds a pass's queued jobs by "workspace/name": an index into
// the queue read, not a copy of each ref (a copy per job, 100,000 of
// them in a pass over the whole queue, was the largest thing it held).
type queueRefs struct {
	queued []store.QueuedJobRef
	at     map[string]int32
}

// get returns the queued job id names; the zero ref if the pass did not
// read it.
func (r queueRefs) get(id string) store.QueuedJobRef {
	i, ok := r.at[id]
	if !ok {
		return store.QueuedJobRef{}
	}
	return r.queued[i]
}
