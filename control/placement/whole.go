package placement

import (
	"maps"
	"time"

	"github.com/shoal-ml/shoal/control/accounting"
	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
)

// wholePass is a pass over the whole queue as it reads it: one compute
// after the other, each compute's queue a page at a time (planWhole).
type wholePass struct {
	l       *Loop
	now     time.Time
	st      *scheduling.State
	blocked map[string]accounting.BlockedJob

	// What the pass decided so far; waiting was made for room reasons.
	waiting    map[string]scheduler.Reason
	room       int
	refs       queueRefs
	placements []scheduler.Placement
	largest    []store.QueuedJobRef

	// The compute being read (start ... finish).
	active   bool
	key      string
	deleting *scheduler.Reason
	// whole: the compute's queue is scheduled at once when read, its
	// pages kept until then. A queue with budget-demoted jobs (they move
	// back within it) or of one-image nodes (not strict: a job may pass
	// one that waits for another image) is not scheduled in pages.
	whole bool
	kept  []store.QueuedJobRef
	// nodes and cs are the cluster as the next page finds it: the nodes
	// the pages before it placed jobs on are no longer free and count as
	// busy, and a head that could not start blocks it (cs.Behind).
	nodes []scheduler.Node
	cs    scheduler.ClusterState
	gang  scheduling.Largest
}

// newWholePass starts a pass at now over the nodes and computes of st,
// its map of reasons made for about waiting jobs.
func newWholePass(l *Loop, now time.Time, st *scheduling.State, blocked map[string]accounting.BlockedJob, waiting int) *wholePass {
	// A little room: the queue grows between passes.
	room := waiting + waiting/16
	return &wholePass{l: l, now: now, st: st, blocked: blocked, waiting: make(map[string]scheduler.Reason, room), room: room, refs: queueRefs{at: map[string]int32{}}}
}

// start begins the compute of key, whose queue's pages follow.
func (w *wholePass) start(key string) {
	w.active, w.key = true, key
	w.deleting, w.whole, w.nodes, w.cs, w.gang = nil, false, nil, scheduler.ClusterState{}, scheduling.Largest{}
	ci := w.st.Clusters[key]
	if ci != nil && ci.Compute.ProvisioningState == compute.ProvisioningDeleting {
		// It can never run: ReconcileComputes fails it. Until then its
		// reason says so, not what it waited for before the delete
		// (e.g. "cluster is at max_instances"); it is no demand and no
		// budget reason overrides it.
		r := deletingReason(ci.Compute)
		w.deleting = &r
		return
	}
	if ci != nil {
		snap := scheduler.Snapshot{Clusters: map[string]scheduler.ClusterState{}}
		w.l.addCluster(&snap, key, ci, w.now)
		w.nodes, w.cs = snap.Nodes, snap.Clusters[key]
	}
	w.whole = len(w.blocked) > 0 || w.cs.NodeImages
}

// add takes the next page of the compute's queue.
func (w *wholePass) add(page []store.QueuedJobRef) {
	switch {
	case w.deleting != nil:
		for _, j := range page {
			w.waiting[j.Workspace+"/"+j.Name] = *w.deleting
		}
	case w.whole:
		w.kept = append(w.kept, page...)
	default:
		w.schedule(page)
	}
}

// finish ends the compute being read (none: nothing).
func (w *wholePass) finish() {
	if !w.active {
		return
	}
	w.active = false
	if len(w.kept) > 0 {
		w.schedule(w.kept)
		clear(w.kept)
		w.kept = w.kept[:0]
	}
	if j, ok := w.gang.Job(); ok {
		w.largest = append(w.largest, j)
	}
}

// schedule places what it can of queue, the next jobs of the compute's
// queue in queue order, and keeps why the others wait.
func (w *wholePass) schedule(queue []store.QueuedJobRef) {
	key := w.key
	snap := scheduler.Snapshot{Clusters: map[string]scheduler.ClusterState{key: w.cs}, Jobs: make([]scheduler.Job, 0, len(queue))}
	if w.cs.Behind.Head == "" {
		// Behind a blocked head nothing is placed: the nodes are not
		// looked at (10,000 of them sorted again for every page).
		snap.Nodes = w.nodes
	}
	for _, j := range queue {
		id := j.Workspace + "/" + j.Name
		_, demoted := w.blocked[id]
		snap.Jobs = append(snap.Jobs, scheduling.QueueJobKeyed(j, demoted, id, key))
	}
	res := scheduler.Schedule(snap)
	// snap.Jobs[i] is queue[i]: the placed jobs' refs are kept (Apply
	// places them), no other's.
	if len(res.Placements) > 0 {
		placed := make(map[string]bool, len(res.Placements))
		taken := map[string]bool{}
		for _, pl := range res.Placements {
			placed[pl.JobID] = true
			for _, id := range pl.NodeIDs {
				taken[id] = true
			}
			w.cs.Busy += len(pl.NodeIDs)
		}
		for i := range snap.Jobs {
			if id := snap.Jobs[i].ID; placed[id] {
				w.refs.at[id] = int32(len(w.refs.queued))
				w.refs.queued = append(w.refs.queued, queue[i])
			}
		}
		for i := range w.nodes {
			if taken[w.nodes[i].ID] {
				w.nodes[i].Free = false
			}
		}
		w.placements = append(w.placements, res.Placements...)
	}
	if b, ok := res.Blocked[key]; ok {
		w.cs.Behind = b
	}
	if len(w.blocked) > 0 {
		for id := range res.Waiting {
			if b, ok := w.blocked[id]; ok {
				res.Waiting[id] = budgetReason(b)
			}
		}
	}
	w.gang.Add(queue, func(i int) bool {
		_, ok := res.Waiting[snap.Jobs[i].ID]
		return ok
	})
	if len(w.waiting)+len(res.Waiting) <= w.room {
		maps.Copy(w.waiting, res.Waiting) // a page's into the map made for them all
	} else {
		w.waiting = join(w.waiting, res.Waiting)
	}
}
