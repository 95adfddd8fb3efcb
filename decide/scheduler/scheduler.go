// Package scheduler decides which queued command jobs start on which idle
// nodes of a compute cluster, and explains why every other job waits.
//
// It is pure placement logic over a Snapshot: no I/O, no clock, no
// goroutines, no state between calls. The caller takes a coherent snapshot
// (under whatever lock or transaction it needs), calls Schedule, and applies
// the Result the same way; that keeps every decision reproducible in tests
// and lets the caller decide how often to run a pass.
//
// The model is Azure ML AmlCompute's:
//
//   - a cluster has nodes and a node runs at most one job at a time;
//   - a job needs InstanceCount nodes of one cluster, all at once or none
//     (gang scheduling: a distributed job that starts on part of its nodes
//     would hold them while it waits for the rest, and two such jobs can
//     deadlock each other);
//   - each cluster's queue is ordered by higher Priority first, then lower
//     Seq (submission order);
//   - ordering is strict: once the job at the head of a cluster's queue
//     cannot be placed, no job behind it in that cluster takes nodes. Without
//     this, a stream of 1-node jobs would take every node as it frees up and
//     a multi-node job would starve forever. A job submitted later with a
//     higher priority still goes first, because it is ahead in the queue.
//
// Clusters are independent: a blocked head only blocks its own cluster.
//
// Cost is O(N log N + J log J) for N nodes and J jobs: jobs and free nodes
// are bucketed by cluster with one map lookup each, each bucket is sorted
// once, and free nodes are handed out as consecutive runs of a sorted slice.
package scheduler

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"
)

// Node is one node of a compute cluster as the scheduler sees it.
type Node struct {
	// ID names the node; IDs are unique across the snapshot.
	ID string
	// Cluster is the cluster key (workspace/name), opaque to the scheduler:
	// it is only compared with Job.Cluster and the Snapshot.Clusters keys.
	Cluster string
	// Free reports that the node is idle and accepting work (not draining,
	// not preparing, not busy). Only free nodes are ever placed on.
	Free bool
	// IdleSince is when the node last became idle. A job takes the node
	// idle longest first (the one whose idle timer is nearest to expiring
	// is reused, the recently freed ones stay warm); equal times, or none,
	// go by ID.
	IdleSince time.Time
	// Fallback marks a node to use only when no other free node of its
	// cluster is left: a dedicated node a low-priority cluster got through
	// its tier fallback. Jobs move back to low-priority nodes as they come,
	// so the dedicated ones go idle and are released first.
	Fallback bool
	// Image, when set, is the one container image the node runs (a
	// kubernetes location's node is a pod of one image): it takes only
	// jobs of that image or of none. Empty: any job (other providers).
	Image string
}

// Job is one queued job waiting to be placed.
type Job struct {
	// ID names the job; IDs are unique across the snapshot, since
	// Result.Waiting is keyed by them.
	ID string
	// Cluster is the cluster key the job was submitted to.
	Cluster string
	// Priority orders the queue: larger runs first.
	Priority int
	// Seq is the submission order within equal priorities: smaller first.
	Seq int64
	// InstanceCount is how many nodes the job needs at once (>= 1). A value
	// below 1 is treated as 1, so a bad record can never be "placed" on no
	// nodes at all.
	InstanceCount int
	// Image is the job's resolved container image, "" for a job that
	// names none (it runs on any node). It is compared with Node.Image.
	Image string
}

// ClusterState is what the scheduler knows about a cluster beyond its
// nodes. It is used only to explain waiting jobs, never to place them:
// placement depends on free nodes alone.
type ClusterState struct {
	// MaxInstances is the cluster's max_instances; 0 or less means unknown,
	// treated as unlimited (a valid cluster always has at least 1).
	MaxInstances int
	// Provisioning counts nodes being provisioned (preparing): they will
	// become free without the autoscaler doing anything more.
	Provisioning int
	// Busy counts nodes running jobs at the time of the snapshot.
	Busy int
	// QuotaBlocked, when non-empty, is why the autoscaler could not add
	// nodes, e.g. "dedicated quota standardDSv2Family 16/16 vCPUs in local":
	// a sentence, shown, never read. BlockedBy says what blocked them.
	QuotaBlocked string
	// BlockedBy classifies QuotaBlocked: ReasonBudget for a reached block
	// budget, ReasonGangTimeout for a gang released and backing off,
	// ReasonQuota (or empty) for an exhausted quota. The waiting jobs'
	// reason follows it, whatever QuotaBlocked says.
	BlockedBy ReasonCode
	// ProvisioningNote, when non-empty, is why a node being provisioned
	// has not started yet, in its provider's words (Kubernetes' "0/3
	// nodes are available: 3 Insufficient cpu."): appended to the
	// reasons of jobs waiting for provisioning.
	ProvisioningNote string
	// Unavailable, when non-empty, says why the compute takes no jobs now
	// (a compute instance that is stopped); its queued jobs wait with it.
	Unavailable string
	// Window, when non-empty, says a scale window sets MaxInstances now
	// ("max_instances is 0 in scale window nights until 07:00 (UTC)"):
	// MaxInstances is then taken as it is, 0 included, and a job the
	// window keeps from starting waits with ReasonScaleWindow and this
	// sentence.
	Window string
	// NodeImages says the cluster's nodes run one image each (a
	// kubernetes location's pods): placement then matches Job.Image with
	// Node.Image, and strict ordering holds among jobs that could use the
	// same nodes. Otherwise images are not looked at.
	NodeImages bool
	// Behind, when its Head is set, says an earlier pass over the front of
	// this cluster's queue found a head that could not start
	// (Result.Blocked): every job of this snapshot waits behind it, the
	// count going on from Behind.Ahead. A caller that schedules a long
	// queue in pages, in queue order, carries it from one page to the
	// next. Not for NodeImages clusters, whose queues are not strict.
	Behind Behind
}

// Behind is where a cluster's queue stands once the first job that cannot
// start is found: the jobs after it wait behind it.
type Behind struct {
	// Head is the ID of the job that could not start.
	Head string
	// Ahead is how many jobs the next job of the queue waits behind, the
	// head included.
	Ahead int
}

// Snapshot is the input of one scheduling pass.
type Snapshot struct {
	// Nodes are the nodes of every cluster, in any order; nodes that are not
	// Free, or belong to a cluster with no queued job, are ignored.
	Nodes []Node
	// Jobs are the queued jobs, in any order: Schedule sorts them.
	Jobs []Job
	// Clusters holds per-cluster counters by cluster key. A cluster with
	// queued jobs but no entry still schedules, with an unlimited maximum.
	Clusters map[string]ClusterState
}

// Placement starts one job on a gang of nodes.
type Placement struct {
	// JobID is the placed job.
	JobID string
	// NodeIDs has exactly the job's InstanceCount nodes; NodeIDs[i] is the
	// node of rank i. The slices of different placements share one backing
	// array but never overlap, and their capacity is capped, so appending
	// to one cannot clobber another.
	NodeIDs []string
}

// ReasonCode classifies why a job is waiting, for programs; Reason.Message
// is the same thing for people.
type ReasonCode string

// Reason codes. The spellings follow the snake_case codes used elsewhere in
// Shoal (errors, event kinds) since they end up in the same API responses.
const (
	// ReasonProvisioning: nodes are being provisioned and will let the job
	// start (or the cluster can still grow and is already doing so).
	ReasonProvisioning ReasonCode = "provisioning"
	// ReasonAtMax: the cluster has max_instances nodes, so the job waits
	// for busy nodes to finish; also used for a job that needs more nodes
	// than max_instances allows at all.
	ReasonAtMax ReasonCode = "at_max_instances"
	// ReasonBudget: a reached block budget stops scale-up for the job's
	// cluster or for its submitter.
	ReasonBudget ReasonCode = "budget_reached"
	// ReasonQuota: the autoscaler could not add the nodes the job needs
	// because a quota is exhausted.
	ReasonQuota ReasonCode = "quota_exceeded"
	// ReasonBehind: a job ahead of this one in its cluster's queue cannot
	// start, and strict ordering keeps this one from overtaking it.
	ReasonBehind ReasonCode = "waiting_behind"
	// ReasonGangIncomplete: some of a multi-node job's nodes are free but
	// not all of them, and a gang starts all at once or not at all.
	ReasonGangIncomplete ReasonCode = "gang_incomplete"
	// ReasonNoNodes: there are not enough free nodes yet and none are being
	// provisioned; the autoscaler has to add some.
	ReasonNoNodes ReasonCode = "no_nodes"
	// ReasonUnavailable: the compute takes no jobs now (an instance that
	// is stopped): the user has to start it.
	ReasonUnavailable ReasonCode = "compute_unavailable"
	// ReasonDeleting: the job's compute is being deleted, so the job will
	// never start; the compute controller fails it (the placement pass
	// sets this reason, never Schedule, since such a job is not
	// scheduled at all).
	ReasonDeleting ReasonCode = "compute_deleting"
	// ReasonImageMismatch: free nodes exist but run another image (a
	// kubernetes location's node is a pod of one image), so the job
	// waits for a node of its own image.
	ReasonImageMismatch ReasonCode = "image_mismatch"
	// ReasonGangTimeout: the nodes of the job's gang did not all come up
	// within the location's gang timeout, so they were all released and
	// scale-up for the gang is backing off (ClusterState.BlockedBy).
	ReasonGangTimeout ReasonCode = "gang_timeout"
	// ReasonScaleWindow: a scale window of the cluster caps its
	// max_instances below what the job needs (ClusterState.Window).
	ReasonScaleWindow ReasonCode = "scale_window"
)

// Result is the outcome of one scheduling pass.
type Result struct {
	// Placements are the jobs to start now, ordered by cluster key and then
	// queue order: the order in which a dispatcher should start them.
	Placements []Placement
	// Waiting has a reason for every queued job that was not placed, by job
	// ID. A job is either placed or waiting, never both.
	Waiting map[string]Reason
	// Blocked holds, by cluster key, where each cluster's queue was
	// blocked (its head and the count behind it) for the clusters whose
	// queue is strict and had a job that could not start: a caller that
	// schedules the next page of the queue passes it as
	// ClusterState.Behind. Nil when no queue was blocked.
	Blocked map[string]Behind
}

// queueKeys orders jobs for the queue. Each key is a uint64 whose low bits
// are the job's index in Snapshot.Jobs (key & mask).
//
// In the common case the key packs the whole queue order: (maxPrio-prio),
// then (seq-minSeq), then the index, so sorting plain integers (no
// comparison function, 8 bytes per swap) yields queue order, and ties on
// priority and seq come out in input order, which sort then puts in ID
// order. When the priority and seq ranges are too wide to pack next to the
// index, jobs are sorted with a comparison function instead and the key is
// the bare index (mask is all ones).
type queueKeys struct {
	keys    []uint64
	mask    uint64
	idxBits uint
	packed  bool
}

// cluster is one cluster's share of the snapshot during a pass.
type cluster struct {
	name string
	jobs []uint64 // queue keys, sub-slice of one array shared by all clusters
	free []string // free node IDs, sorted; sub-slice of one shared array
}

// Schedule runs one placement pass over s and returns which jobs start on
// which nodes and why every other job waits. It does not modify s.
//
// Node choice is deterministic and independent of input order: each
// cluster's free node IDs are sorted (byte-wise, so "n10" < "n2") and handed
// out in that order, the first job in queue order getting the smallest IDs,
// and within a gang NodeIDs is ascending, so rank 0 is the smallest ID.
// Equal Priority and Seq are broken by job ID for the same reason.
func Schedule(s Snapshot) Result {
	// Give every cluster that has queued jobs a slot, in first-seen order.
	// Jobs often arrive grouped by cluster, so remembering the last key
	// saves most map lookups then. int32 slots halve the per-job array; there
	// cannot be more clusters than jobs.
	slotOf := make(map[string]int32)
	var names []string
	var jobCount []int
	jobSlot := make([]int32, len(s.Jobs))
	lastName, lastSlot := "", int32(-1)
	minPrio, maxPrio := math.MaxInt, math.MinInt
	minSeq, maxSeq := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range s.Jobs {
		j := &s.Jobs[i]
		minPrio, maxPrio = min(minPrio, j.Priority), max(maxPrio, j.Priority)
		minSeq, maxSeq = min(minSeq, j.Seq), max(maxSeq, j.Seq)
		name := j.Cluster
		if lastSlot < 0 || name != lastName {
			sl, ok := slotOf[name]
			if !ok {
				sl = int32(len(names))
				slotOf[name] = sl
				names = append(names, name)
				jobCount = append(jobCount, 0)
			}
			lastName, lastSlot = name, sl
		}
		jobSlot[i] = lastSlot
		jobCount[lastSlot]++
	}
	if len(names) == 0 {
		return Result{Waiting: map[string]Reason{}}
	}

	// Free nodes of those clusters; nodes of clusters with nothing queued
	// can be skipped (slot -1) since nothing could be placed on them.
	nodeSlot := make([]int32, len(s.Nodes))
	freeCount := make([]int, len(names))
	totalFree := 0
	var idleSince map[string]time.Time // only when some node says
	var fallback map[string]bool       // likewise
	var imageOf map[string]string      // likewise
	for i := range s.Nodes {
		nodeSlot[i] = -1
		if !s.Nodes[i].Free {
			continue
		}
		// Only the nodes of clusters with queued jobs matter: the
		// others' idle times are not gathered (10,000 idle nodes of a
		// cluster with nothing queued made a map per pass).
		name := s.Nodes[i].Cluster
		if lastSlot < 0 || name != lastName {
			sl, ok := slotOf[name]
			if !ok {
				continue
			}
			lastName, lastSlot = name, sl
		}
		if s.Nodes[i].Fallback {
			if fallback == nil {
				fallback = map[string]bool{}
			}
			fallback[s.Nodes[i].ID] = true
		}
		if img := s.Nodes[i].Image; img != "" {
			if imageOf == nil {
				imageOf = map[string]string{}
			}
			imageOf[s.Nodes[i].ID] = img
		}
		if t := s.Nodes[i].IdleSince; !t.IsZero() {
			if idleSince == nil {
				idleSince = map[string]time.Time{}
			}
			if old, ok := idleSince[s.Nodes[i].ID]; !ok || t.Before(old) {
				idleSince[s.Nodes[i].ID] = t
			}
		}
		nodeSlot[i] = lastSlot
		freeCount[lastSlot]++
		totalFree++
	}

	// Visit clusters in key order so the order of Placements does not depend
	// on the order of the input.
	order := make([]int32, len(names))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(names[a], names[b]) })

	// Bucket jobs and free nodes by cluster into two shared arrays (a
	// counting sort by cluster), so each cluster gets a contiguous run.
	clusters := make([]cluster, len(names))
	q := newQueueKeys(len(s.Jobs), uint64(maxPrio)-uint64(minPrio), uint64(maxSeq)-uint64(minSeq))
	queue := q.keys
	free := make([]string, totalFree)
	jobAt := make([]int, len(names)) // next write position, by slot
	nodeAt := make([]int, len(names))
	j0, n0 := 0, 0
	for i, sl := range order {
		clusters[i] = cluster{
			name: names[sl],
			jobs: queue[j0 : j0+jobCount[sl] : j0+jobCount[sl]],
			free: free[n0 : n0+freeCount[sl] : n0+freeCount[sl]],
		}
		jobAt[sl], nodeAt[sl] = j0, n0
		j0 += jobCount[sl]
		n0 += freeCount[sl]
	}
	// The differences are taken in uint64 so that even extreme values
	// (seq near both ends of int64) cannot overflow; they are exact because
	// each is non-negative and below the range checked by newQueueKeys.
	seqShift := q.idxBits
	prioShift := q.idxBits + uint(bits.Len64(uint64(maxSeq)-uint64(minSeq)))
	for i := range s.Jobs {
		sl := jobSlot[i]
		key := uint64(i)
		if q.packed {
			key |= (uint64(maxPrio)-uint64(s.Jobs[i].Priority))<<prioShift |
				(uint64(s.Jobs[i].Seq)-uint64(minSeq))<<seqShift
		}
		queue[jobAt[sl]] = key
		jobAt[sl]++
	}
	for i, sl := range nodeSlot {
		if sl >= 0 {
			free[nodeAt[sl]] = s.Nodes[i].ID
			nodeAt[sl]++
		}
	}

	// Sort each cluster's queue and free nodes once. Compacting drops a node
	// listed twice, so it can never be given to two jobs.
	maxPlaced := 0
	for i := range clusters {
		c := &clusters[i]
		q.sort(c.jobs, s.Jobs)
		slices.Sort(c.free)
		c.free = slices.Compact(c.free)
		if idleSince != nil {
			slices.SortStableFunc(c.free, func(a, b string) int { return idleSince[a].Compare(idleSince[b]) })
		}
		if fallback != nil {
			slices.SortStableFunc(c.free, func(a, b string) int {
				switch {
				case fallback[a] == fallback[b]:
					return 0
				case fallback[a]:
					return 1
				}
				return -1
			})
		}
		maxPlaced += min(len(c.jobs), len(c.free))
	}

	// maxPlaced bounds the placements (one node per job at best), so the
	// slice never grows and the map starts at least as large as the number
	// of jobs that must wait.
	res := Result{
		Placements: make([]Placement, 0, maxPlaced),
		Waiting:    make(map[string]Reason, len(s.Jobs)-maxPlaced),
	}
	for i := range clusters {
		if s.Clusters[clusters[i].name].NodeImages {
			placeImages(&res, &clusters[i], s.Jobs, q.mask, s.Clusters[clusters[i].name], imageOf)
			continue
		}
		placeCluster(&res, &clusters[i], s.Jobs, q.mask, s.Clusters[clusters[i].name])
	}
	return res
}

// newQueueKeys allocates the keys of n jobs whose priorities and seqs span
// prioRange and seqRange, and packs them if they fit in 64 bits.
func newQueueKeys(n int, prioRange, seqRange uint64) queueKeys {
	idxBits := uint(bits.Len(uint(max(n-1, 0))))
	q := queueKeys{keys: make([]uint64, n), mask: ^uint64(0)}
	if idxBits+uint(bits.Len64(seqRange))+uint(bits.Len64(prioRange)) <= 64 {
		q.packed, q.idxBits, q.mask = true, idxBits, 1<<idxBits-1
	}
	return q
}

// sort puts one cluster's keys in queue order: higher priority first, then
// lower seq, then job ID (so the result does not depend on input order),
// then input index (only duplicate IDs get that far).
func (q queueKeys) sort(keys []uint64, jobs []Job) {
	byID := func(a, b uint64) int {
		if c := strings.Compare(jobs[a&q.mask].ID, jobs[b&q.mask].ID); c != 0 {
			return c
		}
		return cmp.Compare(a&q.mask, b&q.mask)
	}
	if !q.packed {
		slices.SortFunc(keys, func(a, b uint64) int {
			ja, jb := &jobs[a], &jobs[b]
			if ja.Priority != jb.Priority {
				return cmp.Compare(jb.Priority, ja.Priority) // larger first
			}
			if ja.Seq != jb.Seq {
				return cmp.Compare(ja.Seq, jb.Seq)
			}
			return byID(a, b)
		})
		return
	}
	slices.Sort(keys)
	// Equal priority and seq sorted by index; re-sort each such run by ID.
	// Seq is meant to be unique, so runs are rare and short.
	for i := 0; i < len(keys); {
		hi, j := keys[i]>>q.idxBits, i+1
		for j < len(keys) && keys[j]>>q.idxBits == hi {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(keys[i:j], byID)
		}
		i = j
	}
}

// placeCluster walks one cluster's sorted queue: it places jobs while the
// head of the queue fits, explains the first job that does not, and makes
// every job behind it wait.
func placeCluster(res *Result, c *cluster, jobs []Job, mask uint64, st ClusterState) {
	if st.Behind.Head != "" {
		// The front of the queue, scheduled before this snapshot, is
		// blocked: nothing here may overtake its head.
		ahead := waitBehind(res.Waiting, jobs, c.jobs, mask, st.Behind.Head, max(st.Behind.Ahead, 1), st.MaxInstances)
		res.block(c.name, Behind{Head: st.Behind.Head, Ahead: ahead})
		return
	}
	next := 0 // c.free[next:] are still free; the free slice is used as a queue
	for k, key := range c.jobs {
		j := &jobs[key&mask]
		n := max(j.InstanceCount, 1)
		if n <= len(c.free)-next {
			res.Placements = append(res.Placements, Placement{
				JobID:   j.ID,
				NodeIDs: c.free[next : next+n : next+n],
			})
			next += n
			continue
		}
		if st.Window != "" && n > st.MaxInstances {
			// A scale window keeps the cluster below the job's need
			// until it ends (the window says when); like a job too big
			// for the cluster, it holds back no smaller job.
			res.Waiting[j.ID] = NewReason(ReasonScaleWindow, st.Window)
			continue
		}
		if st.MaxInstances > 0 && n > st.MaxInstances {
			// This job can never start while max_instances stays as it is.
			// Letting it block the queue would stall the cluster forever,
			// so it waits without holding back the jobs behind it.
			res.Waiting[j.ID] = tooBig(n, st.MaxInstances)
			continue
		}
		res.Waiting[j.ID] = headReason(n, len(c.free)-next, next, st)
		ahead := waitBehind(res.Waiting, jobs, c.jobs[k+1:], mask, j.ID, 1, st.MaxInstances)
		res.block(c.name, Behind{Head: j.ID, Ahead: ahead})
		return
	}
}

// headReason explains why the first job of a cluster's queue that does not
// fit must wait. n is the gang size, free the cluster's nodes still free
// after this pass's placements, placed the nodes this pass just used.
//
// Nodes placed in this pass count as busy: by the time anyone reads the
// reason they are running jobs, and counting them keeps B+F+P (the nodes the
// cluster has) unchanged by the pass.
func headReason(n, free, placed int, st ClusterState) Reason {
	p := max(st.Provisioning, 0)
	b := max(st.Busy, 0) + placed
	m := st.MaxInstances
	canGrow := (m <= 0 && st.Window == "") || b+free+p < m
	// A gang with some but not all of its nodes free is the confusing case
	// for users ("there are idle nodes, why is my job not running?"), so it
	// gets its own wording whenever the wait is on nodes arriving.
	gang := n > 1 && free > 0
	switch {
	case st.Unavailable != "" && free < n:
		return NewReason(ReasonUnavailable, st.Unavailable)
	case st.QuotaBlocked != "" && free < n && st.BlockedBy == ReasonGangTimeout:
		// The gang's nodes were released for not coming up together;
		// scale-up for it waits out its backoff.
		return NewReason(ReasonGangTimeout, st.QuotaBlocked)
	case st.QuotaBlocked != "" && free+p < n && st.BlockedBy == ReasonBudget:
		// A block budget stopped scale-up for this cluster.
		return NewReason(ReasonBudget, st.QuotaBlocked+": no new nodes until the next period or a higher limit; running jobs finish")
	case st.QuotaBlocked != "" && free+p < n:
		// Even the nodes on their way are not enough, and the autoscaler
		// cannot add more: the quota is the thing to fix.
		return NewReason(ReasonQuota, "quota exhausted: "+st.QuotaBlocked)
	case p > 0 && (free+p >= n || canGrow):
		// Either the nodes being provisioned complete the job's need, or
		// the cluster is still growing towards it.
		r := NewReason(ReasonProvisioning, fmt.Sprintf("waiting for nodes to be provisioned (%d of %d ready)", free, n))
		if gang {
			r = gangIncomplete(n, free, p)
		}
		if st.ProvisioningNote != "" {
			r = pack(r.code(), 0, r.str()+"; "+st.ProvisioningNote) // not a count: provisioning or a gang
		}
		return r
	case !canGrow && st.Window != "":
		// A scale window holds the cluster where it is.
		return NewReason(ReasonScaleWindow, st.Window)
	case !canGrow:
		// The cluster cannot grow: the job waits for busy nodes to finish.
		return NewReason(ReasonAtMax, fmt.Sprintf("cluster is at max_instances (%d of %d nodes busy)", b, m))
	default:
		if gang {
			return gangIncomplete(n, free, p)
		}
		return NewReason(ReasonNoNodes, fmt.Sprintf("waiting for the autoscaler to add nodes (%d of %d ready)", free, n))
	}
}

// gangIncomplete is the reason of a multi-node job with part of its nodes
// free. It says "F of N ready" like the other reasons so the numbers read
// the same everywhere.
func gangIncomplete(n, free, provisioning int) Reason {
	return NewReason(ReasonGangIncomplete, fmt.Sprintf(
		"waiting for all %d nodes of the gang (%d of %d ready, %d provisioning)", n, free, n, provisioning))
}

// tooBig is the reason of a job that needs more nodes than the cluster may
// ever have.
func tooBig(n, maxInstances int) Reason {
	return NewReason(ReasonAtMax, fmt.Sprintf(
		"job needs %d nodes but the cluster's max_instances is %d; it cannot start until max_instances is raised",
		n, maxInstances))
}

// block records that cluster's queue is blocked as b.
func (r *Result) block(cluster string, b Behind) {
	if r.Blocked == nil {
		r.Blocked = map[string]Behind{}
	}
	r.Blocked[cluster] = b
}

// waitBehind gives every job in tail (the queue behind a blocked head)
// ReasonBehind, counting the jobs it waits behind, from ahead for the
// first, and naming the head. It returns the count for the job after
// tail.
//
// This is where almost all waiting jobs end up, so each reason keeps its
// count and the head's ID, not a sentence of its own (WaitingBehind).
func waitBehind(w map[string]Reason, jobs []Job, tail []uint64, mask uint64, headID string, ahead, maxInstances int) int {
	for _, key := range tail {
		j := &jobs[key&mask]
		if n := max(j.InstanceCount, 1); maxInstances > 0 && n > maxInstances {
			// Can never start: say so rather than blame the head. It does
			// not count as "ahead" of later jobs, which do not wait for it.
			w[j.ID] = tooBig(n, maxInstances)
			continue
		}
		w[j.ID] = WaitingBehind(ahead, headID)
		ahead++
	}
	return ahead
}
