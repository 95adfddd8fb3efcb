// Package autoscaler decides when a compute cluster gains or loses nodes.
//
// It implements the Azure ML cluster flowchart: a queued job is taken by an
// idle node, otherwise a node is provisioned while the cluster is below
// max_instances (and the location's vCPU quota allows), otherwise the job
// waits; a node that runs out of work starts an idle timer and is released
// after idle_time_before_scale_down unless that would take the cluster below
// min_instances.
//
// The decision logic (Plan) is a pure function of a Snapshot and the time, so
// that tests and the simulator can replay any situation with a fake clock.
// Autoscaler.RunOnce is the thin shell that reads a Snapshot from a Source and
// hands each Decision to an Actuator.
package autoscaler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
)

// NodeState is the lifecycle state of a node, with the values Azure ML shows
// for cluster nodes, so that counts read the same as `az ml compute list-nodes`.
type NodeState string

// Node states. Only preparing, idle and running nodes are live: they serve or
// are about to serve jobs. Leaving nodes still hold quota until they are gone;
// unusable and preempted nodes are dead weight the caller removes.
const (
	// NodePreparing is a node being provisioned; it already counts toward
	// covering queued demand so that one job never provisions two nodes.
	NodePreparing NodeState = "preparing"
	// NodeIdle is a ready node without a job; its idle timer runs.
	NodeIdle NodeState = "idle"
	// NodeRunning is a node running a job; it is never released by scale-down.
	NodeRunning NodeState = "running"
	// NodeLeaving is a node being released; it holds quota until gone.
	NodeLeaving NodeState = "leaving"
	// NodeUnusable is a node that failed; it is not live and holds no quota.
	NodeUnusable NodeState = "unusable"
	// NodePreempted is a low-priority node taken back by the provider; it is
	// not live, so demand that remains provisions a replacement.
	NodePreempted NodeState = "preempted"
)

// Node is what the autoscaler needs to know about one node of a cluster.
type Node struct {
	// ID names the node in Release decisions and reasons.
	ID string
	// State is the node's lifecycle state.
	State NodeState
	// IdleSince is when the node last became idle (zero if not idle); the
	// idle timer counts from it. An idle node without it counts from
	// CreatedOn, as a node that never ran a job has been idle since it was
	// created.
	IdleSince time.Time
	// CreatedOn is when the node was created.
	CreatedOn time.Time
	// Draining is true when the node is already being released, so it is
	// neither live nor released a second time (but still holds quota).
	Draining bool
	// Static nodes were joined by hand (a machine its owner added): they
	// count as capacity like any node but are never released by the
	// autoscaler; they leave when their owner removes them.
	Static bool
	// Dedicated marks a dedicated node of a low-priority cluster (the
	// tier fallback's): it counts against dedicated quota.
	Dedicated bool
	// Image is the one image the node runs, on a cluster with NodeImages.
	Image string
}

// Cluster is one compute cluster as the autoscaler sees it.
type Cluster struct {
	// Key identifies the cluster (workspace/name); decisions carry it and
	// clusters are planned in Key order so that a pass is deterministic.
	Key string
	// Name is the compute name, used in reasons.
	Name string
	// MinInstances is the number of live nodes scale-down never goes below.
	MinInstances int
	// MaxInstances is the number of live nodes scale-up never goes above.
	MaxInstances int
	// IdleTimeBeforeScaleDown is how long a node stays idle before it is
	// released.
	IdleTimeBeforeScaleDown time.Duration
	// LowPriority selects the quota the nodes count against: low-priority
	// vCPUs instead of the dedicated family and total limits.
	LowPriority bool
	// Location is the canonical location name; quota is per location.
	Location string
	// Workspace is the cluster's workspace, for its workspace's own
	// per-family limits (Snapshot.WorkspaceQuotas).
	Workspace string
	// Family is the VM family of the cluster's size, for the dedicated
	// per-family limit.
	Family string
	// VCPUsPerNode is the vCPUs of one node of the cluster's size.
	VCPUsPerNode int
	// Nodes are the cluster's nodes in any state.
	Nodes []Node
	// QueuedNodeDemand is the number of nodes the queued jobs of this
	// cluster need: the sum of InstanceCount of queued (not yet placed) jobs.
	QueuedNodeDemand int
	// Deleting is true while the compute is being deleted: every node that
	// is not running is released; running nodes finish their job first.
	Deleting bool
	// Idle, when set, decides the idle timeout (IdlePolicy: fixed or
	// adaptive); nil keeps IdleTimeBeforeScaleDown.
	Idle *IdlePolicy
	// RecentArrivals are the submission times of the cluster's recent
	// jobs, oldest first, for the adaptive policy.
	RecentArrivals []time.Time
	// BudgetBlocked, when set, is why the cluster may not grow (a block
	// budget of its scope is reached): no scale-up, nodes still go.
	BudgetBlocked string
	// FallbackAfter, for a low-priority cluster, is how long a job waits
	// for low-priority capacity before dedicated nodes are added for it
	// (tier_fallback); 0 is never. LongWaitDemand is the node demand of
	// the queued jobs that have waited that long.
	FallbackAfter  time.Duration
	LongWaitDemand int
	// NodeImages says each node runs one image (a kubernetes location's
	// pods): queued demand is then ImageDemand, covered only by idle and
	// preparing nodes of the same image, and scale-up names the image of
	// each node it adds (Decision.Images).
	NodeImages bool
	// ImageDemand is the queued node demand by image, in queue order (""
	// for jobs that name no image: any node serves them).
	ImageDemand []ImageDemand
	// GangTimeout, when positive, is how long the nodes of a gang may
	// take to come up together (the location's gang_timeout): once a
	// node provisioned while a gang (GangDemand > 1) is queued has been
	// preparing that long, every idle and preparing node is released at
	// once, so that a gang that cannot be complete holds nothing.
	GangTimeout time.Duration
	// GangDemand is the largest InstanceCount among the queued jobs.
	GangDemand int
	// GangHeld, when set, says why scale-up waits after such a release
	// (its backoff is running): no node is added meanwhile.
	GangHeld string
	// Window, when set, says that a scale window sets MinInstances and
	// MaxInstances now ("max_instances is 0 in scale window nights until
	// 07:00 (UTC)"): nodes it sheds carry ReasonScaleWindow and this
	// sentence. WindowName names the window, for scale-up reasons.
	Window, WindowName string
}

// ImageDemand is the queued node demand of one image.
type ImageDemand struct {
	// Image is the jobs' resolved image, "" for jobs that name none.
	Image string
	// Nodes is the sum of their InstanceCount.
	Nodes int
}

// LocationQuota wraps a location's vCPU limits, for callers that keep quota
// next to other per-location facts. Snapshot.Quotas holds the limits directly.
type LocationQuota struct {
	// Limits are the location's vCPU limits; negative means unlimited.
	Limits catalog.QuotaLimits
}

// Snapshot is everything one planning pass looks at. Taking it whole lets a
// pass see every cluster of a location at once, since they share quota.
type Snapshot struct {
	// Clusters are the clusters to plan, in any order.
	Clusters []Cluster
	// Quotas holds the vCPU limits by canonical location name. A location
	// missing here gets shoal.DefaultQuotaLimits, the built-in quota a
	// location has when its config says nothing.
	Quotas map[string]catalog.QuotaLimits
	// Reserved is quota held outside the clusters: compute instances,
	// running or stopped, share their location's quota with clusters.
	Reserved []Reservation
	// WorkspaceQuotas are the workspaces' own dedicated vCPU limits, by
	// lower-cased workspace then lower-cased family (Azure's workspace
	// quotas, set with updateQuotas): a workspace's clusters of a family
	// stay under both its limit and the location's.
	WorkspaceQuotas map[string]map[string]int
}

// Reservation is vCPUs of quota held by something other than a cluster's
// nodes.
type Reservation struct {
	Location    string
	Workspace   string
	Family      string
	LowPriority bool
	VCPUs       int
}

// Action is what a Decision asks the Actuator to do.
type Action string

// Actions.
const (
	// ActionScaleUp provisions Decision.Count nodes.
	ActionScaleUp Action = "scale_up"
	// ActionRelease drains and releases Decision.NodeIDs.
	ActionRelease Action = "release"
	// ActionBlocked reports nodes that were needed but not added because of
	// quota; it is recorded so the user can see why jobs wait.
	ActionBlocked Action = "blocked"
	// ActionNone reports a node that was due for scale-down but kept; it is
	// recorded so the user can see why the cluster did not shrink.
	ActionNone Action = "none"
)

// ReasonCode classifies why a Decision was taken, for programs (metrics,
// event kinds, the scheduler's explanation of waiting jobs); Decision.Reason
// is the same thing for people. Code decides, the sentence only explains:
// nothing may be decided by reading Reason.
type ReasonCode string

// Reason codes. The spellings are the reason label of the scale decision
// metric (shoal_scale_decisions_total), which shows them as they are.
const (
	// ReasonDemand: nodes added because queued jobs need them.
	ReasonDemand ReasonCode = "demand"
	// ReasonMinInstances: nodes added to reach min_instances, or an idle
	// node kept because releasing it would go below min_instances.
	ReasonMinInstances ReasonCode = "min_instances"
	// ReasonIdle: a node idle past idle_time_before_scale_down released.
	ReasonIdle ReasonCode = "idle"
	// ReasonAdaptive: the adaptive idle policy kept or released a node.
	ReasonAdaptive ReasonCode = "adaptive"
	// ReasonDeleting: a node released because its compute is being deleted.
	ReasonDeleting ReasonCode = "deleting"
	// ReasonMaxInstances: a node released because max_instances was lowered
	// below the live node count.
	ReasonMaxInstances ReasonCode = "max_instances"
	// ReasonQuota: nodes not added (Blocked), or fewer added (ScaleUp),
	// because a vCPU quota is exhausted.
	ReasonQuota ReasonCode = "quota"
	// ReasonBudget: nodes not added because a block budget of the
	// cluster's scope is reached (Cluster.BudgetBlocked).
	ReasonBudget ReasonCode = "budget"
	// ReasonTierFallback: dedicated nodes added to a low-priority cluster
	// for jobs that waited too long for low-priority capacity.
	ReasonTierFallback ReasonCode = "tier_fallback"
	// ReasonScaleWindow: a node released, at once, because a scale window
	// lowered max_instances below the live node count (Cluster.Window).
	ReasonScaleWindow ReasonCode = "scale_window"
	// ReasonGangTimeout: a gang's nodes released together because some
	// were still preparing after the gang timeout (Release), or nodes not
	// added while the gang's backoff runs (Blocked).
	ReasonGangTimeout ReasonCode = "gang_timeout"
)

// Decision is one step of a plan, with a reason the user can read.
type Decision struct {
	// Cluster is the cluster key.
	Cluster string
	// Action is what to do.
	Action Action
	// Count is the nodes to add (ScaleUp), or the nodes that could not be
	// added (Blocked).
	Count int
	// Dedicated, on a ScaleUp of a low-priority cluster, asks for
	// dedicated nodes (the tier fallback).
	Dedicated bool
	// Images, on a ScaleUp of a cluster with NodeImages, is the image of
	// each node to add (Count of them; "" for the location's default).
	Images []string
	// NodeIDs are the nodes to release (Release) or the node kept (None).
	NodeIDs []string
	// From and To are the live node count before and after this decision,
	// for the message.
	From, To int
	// Code is why, for programs: every Decision carries one.
	Code ReasonCode
	// Reason is a complete sentence saying why, e.g. "scale 0→2: 4 nodes
	// needed by queued jobs, capped at max_instances 2" or "node n-3 idle
	// 120 s ≥ 120 s: released".
	Reason string
}

// Plan computes the decisions of one pass. It is pure and deterministic:
// clusters are planned in Key order, nodes in a fixed order, and the vCPU
// usage of a location grows as the pass adds nodes, so two clusters never
// share the same quota headroom. The snapshot is not modified.
func Plan(s Snapshot, now time.Time) []Decision {
	clusters := slices.Clone(s.Clusters)
	slices.SortStableFunc(clusters, func(a, b Cluster) int { return cmp.Compare(a.Key, b.Key) })
	book := newQuotaBook(clusters, s.Quotas)
	book.wsLimits = s.WorkspaceQuotas
	for _, r := range s.Reserved {
		book.add(&Cluster{Location: r.Location, Workspace: r.Workspace, Family: r.Family, LowPriority: r.LowPriority}, max(r.VCPUs, 0))
	}
	var out []Decision
	for i := range clusters {
		out = append(out, planCluster(&clusters[i], now, book)...)
	}
	return out
}

// planCluster walks the flowchart for one cluster.
func planCluster(c *Cluster, now time.Time, book *quotaBook) []Decision {
	var preparing []Node
	// Counted first and sized once: grown by append, this list was a
	// sixth of all the server's allocation at 10,000 idle nodes
	// (bench/scale.sh --profile).
	idles := 0
	for _, n := range c.Nodes {
		if !n.Draining && n.State == NodeIdle {
			idles++
		}
	}
	idle := make([]Node, 0, idles)
	running := 0
	for _, n := range c.Nodes {
		if n.Draining {
			continue
		}
		switch n.State {
		case NodeIdle:
			idle = append(idle, n)
		case NodePreparing:
			preparing = append(preparing, n)
		case NodeRunning:
			running++
		}
	}
	live := len(idle) + len(preparing) + running
	maxN := max(c.MaxInstances, 0)
	minN := min(max(c.MinInstances, 0), maxN) // an invalid min > max yields to max
	demand := max(c.QueuedNodeDemand, 0)

	// Release longest-idle nodes first: they are the least likely to be
	// about to get work. Release the newest preparing nodes first: they
	// have made the least progress. Both orders end on the ID, unique in
	// a cluster, so an unstable sort gives the one order: the stable
	// sort's merges were a fifth of a placement pass at 10,000 idle
	// nodes (bench/scale.sh --profile, the decisions' profile).
	slices.SortFunc(idle, func(a, b Node) int {
		ta, _ := idleBase(a)
		tb, _ := idleBase(b)
		return cmp.Or(ta.Compare(tb), cmp.Compare(a.ID, b.ID))
	})
	slices.SortFunc(preparing, func(a, b Node) int {
		return cmp.Or(b.CreatedOn.Compare(a.CreatedOn), cmp.Compare(a.ID, b.ID))
	})

	var out []Decision
	release := func(n Node, code ReasonCode, reason string) {
		out = append(out, Decision{Cluster: c.Key, Action: ActionRelease, NodeIDs: []string{n.ID}, From: live, To: live - 1, Code: code, Reason: reason})
		live--
	}

	if c.Deleting {
		// Nothing new is provisioned for a compute being deleted; running
		// nodes finish their job and go on a later pass, once idle.
		for _, n := range idle {
			release(n, ReasonDeleting, fmt.Sprintf("release %s: compute %s is being deleted", n.ID, c.Name))
		}
		for _, n := range preparing {
			release(n, ReasonDeleting, fmt.Sprintf("release %s: compute %s is being deleted", n.ID, c.Name))
		}
		return out
	}

	if live > maxN {
		// max_instances was lowered: shed nodes that run nothing, idle ones
		// first regardless of their idle time. Running nodes finish their
		// job and are shed on a later pass, once idle.
		code := ReasonMaxInstances
		reason := func(n Node) string { return fmt.Sprintf("release %s: max_instances lowered to %d", n.ID, maxN) }
		if c.Window != "" {
			code = ReasonScaleWindow
			reason = func(n Node) string { return fmt.Sprintf("release %s: %s", n.ID, c.Window) }
		}
		for _, n := range slices.Clone(idle) {
			if live <= maxN {
				break
			}
			if n.Static {
				continue
			}
			release(n, code, reason(n))
			idle = slices.DeleteFunc(idle, func(x Node) bool { return x.ID == n.ID })
		}
		for _, n := range slices.Clone(preparing) {
			if live <= maxN {
				break
			}
			if n.Static {
				continue
			}
			release(n, code, reason(n))
			preparing = slices.DeleteFunc(preparing, func(x Node) bool { return x.ID == n.ID })
		}
	}

	if d, ok := gangRelease(c, now, idle, preparing, live); ok {
		// Nothing else this pass: the released nodes are gone from the
		// next pass's snapshot, and scale-up waits for the backoff.
		return append(out, d)
	}

	// Scale up: idle and preparing nodes already cover part of the demand,
	// so only the shortfall is provisioned.
	desired := max(min(max(running+demand, minN), maxN), running)
	var images []string // with NodeImages: the image of each node to add
	var keepIdle map[string]bool
	if c.NodeImages {
		images, keepIdle = imageShortfall(c, idle, preparing)
		images = images[:min(len(images), max(maxN-live, 0))]
		for len(images)+live < minN {
			images = append(images, "")
		}
		desired = live + len(images)
	}
	switch {
	case desired > live && c.BudgetBlocked != "":
		out = append(out, Decision{Cluster: c.Key, Action: ActionBlocked, Count: desired - live, From: live, To: live, Code: ReasonBudget, Reason: c.BudgetBlocked})
	case desired > live && c.GangHeld != "":
		out = append(out, Decision{Cluster: c.Key, Action: ActionBlocked, Count: desired - live, From: live, To: live, Code: ReasonGangTimeout, Reason: c.GangHeld})
	case desired > live:
		need := desired - live
		fit, blocked := book.take(c, need)
		if fit > 0 {
			d := Decision{
				Cluster: c.Key, Action: ActionScaleUp, Count: fit, From: live, To: live + fit,
				Code:   scaleUpCode(running, demand, minN, fit, need),
				Reason: scaleUpReason(c, live, live+fit, running, len(preparing), len(idle), demand, minN, maxN, fit, need),
			}
			if c.NodeImages {
				d.Images = images[:fit]
			}
			out = append(out, d)
		}
		live += fit
		if fit < need && c.LowPriority && c.FallbackAfter > 0 && c.LongWaitDemand > 0 {
			// Low-priority capacity does not come: jobs that waited
			// long enough get dedicated nodes (the tier fallback).
			dc := *c
			dc.LowPriority = false
			want := min(need-fit, c.LongWaitDemand)
			dfit, _ := book.take(&dc, want)
			if dfit > 0 {
				d := Decision{Cluster: c.Key, Action: ActionScaleUp, Count: dfit, From: live, To: live + dfit, Dedicated: true,
					Code: ReasonTierFallback, Reason: fmt.Sprintf("scale %d→%d on dedicated nodes: %d node(s) needed by jobs that waited over %s for low-priority capacity (%s; tier_fallback)",
						live, live+dfit, want, roundD(c.FallbackAfter), strings.TrimPrefix(blocked, "blocked: "))}
				if c.NodeImages {
					d.Images = images[fit : fit+dfit]
				}
				out = append(out, d)
				live += dfit
				fit += dfit
			}
		}
		if fit < need {
			if c.LowPriority && c.FallbackAfter > 0 {
				blocked += fmt.Sprintf("; jobs waiting over %s get dedicated nodes (tier_fallback)", roundD(c.FallbackAfter))
			}
			out = append(out, Decision{Cluster: c.Key, Action: ActionBlocked, Count: need - fit, From: live, To: live, Code: ReasonQuota, Reason: blocked})
		}
	}

	// Scale down: idle nodes past their idle time go, oldest first, except
	// the idle nodes queued demand is about to use and those min_instances
	// keeps.
	releasable := len(idle) - min(len(idle), demand)
	if c.NodeImages {
		// Only idle nodes of images no queued job wants: the others are
		// about to be taken.
		releasable = len(idle) - len(keepIdle)
	}
	adaptive := c.Idle != nil && c.Idle.Adaptive
	for rank, n := range idle {
		if keepIdle[n.ID] {
			continue
		}
		threshold := max(c.IdleTimeBeforeScaleDown, 0)
		if c.Idle != nil {
			threshold = c.Idle.NodeThreshold(*c, n, rank+1)
		}
		base, ok := idleBase(n)
		if !ok || n.Static {
			// Idle time unknown: never release a node on a guess. A node
			// joined by hand leaves when its owner removes it.
			continue
		}
		idleFor := now.Sub(base)
		if idleFor < threshold {
			if adaptive && idleFor >= c.Idle.Fixed && releasable > 0 && live > minN {
				// Past the fixed timeout, kept by the adaptive one: say why.
				out = append(out, Decision{Cluster: c.Key, Action: ActionNone, NodeIDs: []string{n.ID}, From: live, To: live,
					Code: ReasonAdaptive, Reason: c.Idle.keptReason(n, rank+1, idleFor, *c)})
			}
			continue
		}
		if releasable == 0 {
			continue // a queued job is about to take it
		}
		if live <= minN {
			out = append(out, Decision{
				Cluster: c.Key, Action: ActionNone, NodeIDs: []string{n.ID}, From: live, To: live, Code: ReasonMinInstances,
				Reason: fmt.Sprintf("node %s idle %s s ≥ %s s but kept: min_instances %d", n.ID, seconds(idleFor), seconds(threshold), c.MinInstances),
			})
			continue
		}
		if adaptive {
			release(n, ReasonAdaptive, c.Idle.releaseReason(n, rank+1, idleFor, *c))
		} else {
			release(n, ReasonIdle, fmt.Sprintf("node %s idle %s s ≥ %s s: released", n.ID, seconds(idleFor), seconds(threshold)))
		}
		releasable--
	}
	return out
}

// idleBase returns when an idle node's idle timer started: IdleSince, or
// CreatedOn for a node that never recorded one; false when neither is known.
func idleBase(n Node) (time.Time, bool) {
	switch {
	case !n.IdleSince.IsZero():
		return n.IdleSince, true
	case !n.CreatedOn.IsZero():
		return n.CreatedOn, true
	}
	return time.Time{}, false
}

// seconds formats d in seconds without trailing zeros ("120", "0.5").
// Truncating to milliseconds keeps the order of two durations, so "a ≥ b" in
// a reason stays true.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Truncate(time.Millisecond).Seconds(), 'f', -1, 64)
}

// plural returns "1 node" or "n nodes".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// scaleUpCode classifies a scale-up: capped by quota, or asked for by
// min_instances (the part its reason names), or by queued demand.
func scaleUpCode(running, demand, minN, fit, need int) ReasonCode {
	switch {
	case fit < need:
		return ReasonQuota
	case running+demand < minN:
		return ReasonMinInstances
	}
	return ReasonDemand
}

// scaleUpReason explains a scale-up: what demand asked for, what already
// covers part of it, and what capped it.
func scaleUpReason(c *Cluster, from, to, running, preparing, idle, demand, minN, maxN, fit, need int) string {
	var parts []string
	if demand > 0 {
		parts = append(parts, plural(demand, "node")+" needed by queued jobs")
	}
	if running > 0 {
		parts = append(parts, strconv.Itoa(running)+" running")
	}
	if preparing > 0 {
		parts = append(parts, strconv.Itoa(preparing)+" provisioning")
	}
	if idle > 0 {
		parts = append(parts, strconv.Itoa(idle)+" idle")
	}
	if running+demand < minN {
		parts = append(parts, "min_instances "+strconv.Itoa(c.MinInstances)+inWindow(c))
	}
	if running+demand > maxN {
		parts = append(parts, "capped at max_instances "+strconv.Itoa(maxN)+inWindow(c))
	}
	if fit < need {
		parts = append(parts, fmt.Sprintf("quota allows %d of %d", fit, need))
	}
	return fmt.Sprintf("scale %d→%d: %s", from, to, strings.Join(parts, ", "))
}

// famKey identifies a dedicated family at a location; family names compare
// case-insensitively, as in shoal.QuotaLimits.FamilyLimit.
type famKey struct{ location, family string }

// quotaBook tracks the vCPUs in use per location during one pass.
type quotaBook struct {
	limits    map[string]catalog.QuotaLimits
	family    map[famKey]int
	dedicated map[string]int
	low       map[string]int
	// wsLimits and wsFamily are the workspaces' own family limits and
	// their use, keyed by lower-cased workspace and family.
	wsLimits map[string]map[string]int
	wsFamily map[famKey]int
}

// newQuotaBook counts the vCPUs held by every node of every cluster: live
// nodes, including draining ones, and leaving nodes, which hold quota until
// they are gone.
func newQuotaBook(clusters []Cluster, limits map[string]catalog.QuotaLimits) *quotaBook {
	b := &quotaBook{limits: limits, family: map[famKey]int{}, dedicated: map[string]int{}, low: map[string]int{}, wsFamily: map[famKey]int{}}
	for i := range clusters {
		c := &clusters[i]
		held, dedicated := 0, 0
		for _, n := range c.Nodes {
			switch n.State {
			case NodePreparing, NodeIdle, NodeRunning, NodeLeaving:
				if n.Dedicated && c.LowPriority {
					dedicated++
				} else {
					held++
				}
			}
		}
		b.add(c, held*max(c.VCPUsPerNode, 0))
		if dedicated > 0 {
			dc := *c
			dc.LowPriority = false
			b.add(&dc, dedicated*max(c.VCPUsPerNode, 0))
		}
	}
	return b
}

// add counts vcpus more against the limits c's nodes use.
func (b *quotaBook) add(c *Cluster, vcpus int) {
	if c.LowPriority {
		b.low[c.Location] += vcpus
		return
	}
	b.family[famKey{c.Location, strings.ToLower(c.Family)}] += vcpus
	b.dedicated[c.Location] += vcpus
	b.wsFamily[famKey{strings.ToLower(c.Workspace), strings.ToLower(c.Family)}] += vcpus
}

// workspaceLimit returns the workspace's own limit of c's family, or -1
// (unlimited: the location's limits alone apply).
func (b *quotaBook) workspaceLimit(c *Cluster) int {
	if lim, ok := b.wsLimits[strings.ToLower(c.Workspace)][strings.ToLower(c.Family)]; ok {
		return lim
	}
	return -1
}

// limitsAt returns the limits of location, or the built-in ones when the
// snapshot has none for it.
func (b *quotaBook) limitsAt(location string) catalog.QuotaLimits {
	if q, ok := b.limits[location]; ok {
		return q
	}
	return catalog.DefaultQuotaLimits()
}

// take reserves as many of need nodes of c as quota allows and returns how
// many fit and, when not all did, the sentence naming the limit that blocked.
func (b *quotaBook) take(c *Cluster, need int) (int, string) {
	v := max(c.VCPUsPerNode, 0)
	q := b.limitsAt(c.Location)
	var fit int
	var blocked string
	if c.LowPriority {
		used := b.low[c.Location]
		fit = min(need, headroom(q.LowPriorityVCPUs, used, v))
		blocked = fmt.Sprintf("blocked: low-priority quota %d/%d vCPUs in %s", used+fit*v, q.LowPriorityVCPUs, c.Location)
	} else {
		famUsed := b.family[famKey{c.Location, strings.ToLower(c.Family)}]
		totUsed := b.dedicated[c.Location]
		famLimit := q.FamilyLimit(c.Family)
		hf := headroom(famLimit, famUsed, v)
		ht := headroom(q.TotalDedicatedVCPUs, totUsed, v)
		wsUsed, wsLimit := b.wsFamily[famKey{strings.ToLower(c.Workspace), strings.ToLower(c.Family)}], b.workspaceLimit(c)
		hw := headroom(wsLimit, wsUsed, v)
		fit = min(need, hf, ht, hw)
		switch {
		case hw < hf && hw < ht:
			blocked = fmt.Sprintf("blocked: workspace %s quota %s %d/%d vCPUs", c.Workspace, c.Family, wsUsed+fit*v, wsLimit)
		case hf <= ht:
			blocked = fmt.Sprintf("blocked: dedicated quota %s %d/%d vCPUs in %s", c.Family, famUsed+fit*v, famLimit, c.Location)
		default:
			blocked = fmt.Sprintf("blocked: total dedicated quota %d/%d vCPUs in %s", totUsed+fit*v, q.TotalDedicatedVCPUs, c.Location)
		}
	}
	b.add(c, fit*v)
	if fit == need {
		blocked = ""
	}
	return fit, blocked
}

// headroom returns how many nodes of v vCPUs fit under limit with used
// taken; a negative limit is unlimited.
func headroom(limit, used, v int) int {
	if limit < 0 || v == 0 {
		return math.MaxInt
	}
	if used >= limit {
		return 0
	}
	return (limit - used) / v
}

// Source provides the state a pass plans from.
type Source interface {
	// Snapshot returns the clusters and quotas as they are at now, the
	// time of the pass: a source that decides anything by time (a backoff
	// still running) reads this now, never a clock of its own, so that a
	// pass sees one instant throughout.
	Snapshot(ctx context.Context, now time.Time) (Snapshot, error)
}

// Actuator carries out decisions. Its methods are called once per decision
// and must be safe to call again on a later pass for the same situation.
type Actuator interface {
	// ScaleUp provisions d.Count nodes.
	ScaleUp(ctx context.Context, d Decision) error
	// Release drains and releases d.NodeIDs.
	Release(ctx context.Context, d Decision) error
	// Record records a Blocked or None decision as an event; the same
	// decision comes back every pass while the situation lasts, so
	// deduplication is the actuator's job.
	Record(ctx context.Context, d Decision) error
}

// Autoscaler runs planning passes against a Source and an Actuator.
type Autoscaler struct {
	// Source provides each pass's snapshot.
	Source Source
	// Actuator applies each pass's decisions.
	Actuator Actuator
}

// RunOnce takes one snapshot, plans, and applies every decision. Errors of
// one cluster do not stop the others: every decision is attempted and the
// errors are joined (errors.Join), each naming its cluster. It returns the
// planned decisions, also when some failed, so the caller can log them. A
// cancelled ctx stops applying the remaining decisions.
func (a *Autoscaler) RunOnce(ctx context.Context, now time.Time) ([]Decision, error) {
	if a.Source == nil || a.Actuator == nil {
		return nil, errors.New("autoscaler: Source and Actuator are required")
	}
	snap, err := a.Source.Snapshot(ctx, now)
	if err != nil {
		return nil, fmt.Errorf("autoscaler: snapshot: %w", err)
	}
	decisions := Plan(snap, now)
	var errs []error
	for _, d := range decisions {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("autoscaler: %w", err))
			break
		}
		var err error
		switch d.Action {
		case ActionScaleUp:
			err = a.Actuator.ScaleUp(ctx, d)
		case ActionRelease:
			err = a.Actuator.Release(ctx, d)
		default:
			err = a.Actuator.Record(ctx, d)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("autoscaler: cluster %s: %s: %w", d.Cluster, d.Action, err))
		}
	}
	return decisions, errors.Join(errs...)
}

// inWindow is " in scale window NAME" for a cluster a window bounds now.
func inWindow(c *Cluster) string {
	if c.WindowName == "" {
		return ""
	}
	return " in scale window " + c.WindowName
}
