package scaling

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/control/provisioning"
	"github.com/shoal-ml/shoal/decide/autoscaler"
	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
)

// scaleSource gives the autoscaler its snapshot: clusters, their nodes and
// the node demand of the jobs still queued after the scheduler's pass.
type scaleSource struct{ c *Loop }

// Snapshot implements autoscaler.Source. It plans from the state the
// scheduler left in this pass when there is one, and reads the store
// otherwise.
func (src scaleSource) Snapshot(ctx context.Context, now time.Time) (autoscaler.Snapshot, error) {
	snap, windows, err := src.snapshot(ctx, now)
	if err == nil {
		if werr := src.c.recordWindows(ctx, windows, now); werr != nil {
			// Scaling goes on by the windows' bounds; the event is told
			// on a later pass, the stored state being unchanged.
			src.c.s.Logger().Warn("recording scale windows", slog.Any("err", werr))
		}
	}
	if err == nil {
		err = src.c.adaptiveArrivals(ctx, &snap)
	}
	if err == nil {
		err = src.c.applyBudgets(ctx, &snap)
	}
	if err == nil {
		err = src.c.longWaitDemand(ctx, &snap)
	}
	if err == nil {
		err = src.c.imageDemand(ctx, &snap)
	}
	src.c.holdBackFailedProvisioning(&snap, now)
	src.c.holdBackGangs(&snap, now)
	return snap, err
}

// snapshot also returns the clusters whose scale window changed since
// their stored state says (recordWindows tells them).
func (src scaleSource) snapshot(ctx context.Context, now time.Time) (autoscaler.Snapshot, []string, error) {
	s := src.c.s
	src.c.mu.Lock()
	st, only := src.c.afterSchedule, src.c.only
	src.c.afterSchedule, src.c.only = nil, nil
	src.c.mu.Unlock()
	if st != nil {
		snap, windows := src.c.scaleSnapshot(st, now, only)
		return onlyOf(snap, only), windows, nil
	}
	var snap autoscaler.Snapshot
	var windows []string
	err := s.Store().View(ctx, func(tx store.Tx) error {
		st, err := scheduling.ReadScaleState(tx)
		if err != nil {
			return err
		}
		snap, windows = src.c.scaleSnapshot(st, now, only)
		snap = onlyOf(snap, only)
		return nil
	})
	return snap, windows, err
}

// onlyOf is snap with only the clusters in only planned (nil: all).
func onlyOf(snap autoscaler.Snapshot, only map[string]bool) autoscaler.Snapshot {
	if only == nil {
		return snap
	}
	return snap.Only(only)
}

// scaleSnapshot turns a state into the autoscaler's snapshot at now, the
// clusters' bounds being those their scale windows set; windows lists the
// clusters whose window changed. A cluster outside only (nil: none is)
// is not planned: its nodes are not copied, only what they hold of the
// quotas is counted (as Snapshot.Only counts it). A pass for one new
// cluster copied every node of a 10,000-node fleet, 1.4 ms each time, a
// tenth of the server's CPU while clusters were created.
func (ctl *Loop) scaleSnapshot(st *scheduling.State, now time.Time, only map[string]bool) (snap autoscaler.Snapshot, windows []string) {
	s := ctl.s
	var unplanned []autoscaler.Reservation
	{
		demand := st.Demand
		snap.Quotas = map[string]catalog.QuotaLimits{}
		snap.WorkspaceQuotas = st.WsQuotas
		for _, l := range s.Catalog().Locations() {
			snap.Quotas[l.Name] = l.Quota
		}
		for key, ci := range st.Clusters {
			comp := ci.Compute
			loc, err := s.Catalog().Location(comp.Location)
			if err != nil {
				continue
			}
			size, ok := s.Catalog().Size(comp.Size)
			if !ok {
				continue
			}
			var cl autoscaler.Cluster
			if comp.IsInstance() {
				cl = instanceSlots(comp, key, loc.Name, demand[key])
			} else {
				cl = autoscaler.Cluster{
					Key: key, Name: comp.Name, MinInstances: *comp.MinInstances, MaxInstances: *comp.MaxInstances,
					IdleTimeBeforeScaleDown: time.Duration(*comp.IdleTimeBeforeScaleDown) * time.Second,
					LowPriority:             comp.Tier == compute.TierLowPriority, Location: loc.Name, Workspace: comp.Workspace, Family: size.Family,
					VCPUsPerNode: size.VCPUs, QueuedNodeDemand: demand[key],
					Deleting: comp.ProvisioningState == compute.ProvisioningDeleting,
				}
				if applyWindow(&cl, comp, now) {
					windows = append(windows, key)
				}
				if comp.IdlePolicy == compute.IdlePolicyAdaptive {
					cl.Idle = adaptivePolicy(comp, loc, size)
				}
				if comp.Tier == compute.TierLowPriority {
					cl.FallbackAfter = comp.TierFallback.Duration()
				}
				if loc.NodeImage != "" {
					cl.NodeImages, cl.GangTimeout = true, loc.GangTimeout
					for _, j := range st.Queued {
						if compute.ComputeKey(j.Workspace, j.ComputeKey) == key {
							cl.GangDemand = max(cl.GangDemand, j.InstanceCount)
						}
					}
				}
			}
			if comp.ProvisioningState == compute.ProvisioningCreating || comp.ProvisioningState == compute.ProvisioningFailed {
				continue
			}
			if only != nil && !only[key] && !comp.IsInstance() {
				unplanned = append(unplanned, heldOf(cl, ci.Nodes, comp.Tier == compute.TierLowPriority)...)
				continue
			}
			// Sized once: grown by append from empty, this copy of every
			// node on every pass was a sixth of all the server's
			// allocation at 10,000 nodes (bench/scale.sh --profile).
			cl.Nodes = make([]autoscaler.Node, 0, len(ci.Nodes))
			for _, n := range ci.Nodes {
				an := autoscaler.Node{ID: n.ID, State: autoscaler.NodeState(n.State), CreatedOn: n.CreatedOn, Draining: n.Draining, Static: n.Role == node.NodeRoleStatic,
					Dedicated: comp.Tier == compute.TierLowPriority && !n.LowPriority, Image: n.Image}
				if n.IdleSince != nil {
					an.IdleSince = *n.IdleSince
				}
				if n.State == node.NodeIdle && len(n.PullingImages) > 0 {
					// Pulling its cluster's images: not idle yet (its idle
					// timer must not release it mid-pull), but on its way.
					an.State = autoscaler.NodePreparing
				}
				cl.Nodes = append(cl.Nodes, an)
			}
			snap.Clusters = append(snap.Clusters, cl)
		}
		snap.Reserved = append(snap.Reserved, st.Reserved...)
		for _, c := range st.Stopped {
			loc, err := s.Catalog().Location(c.Location)
			size, ok := s.Catalog().Size(c.Size)
			if err == nil && ok {
				snap.Reserved = append(snap.Reserved, autoscaler.Reservation{Location: loc.Name, Workspace: c.Workspace, Family: size.Family, VCPUs: size.VCPUs})
			}
		}
		snap.Reserved = append(snap.Reserved, unplanned...)
	}
	slices.Sort(windows)
	return snap, windows
}

// heldOf is what the nodes of cl, a cluster not planned, hold of the
// quotas: as Snapshot.Only counts a cluster it leaves out, from the nodes
// themselves rather than their copies. lowPriority is the cluster's tier.
func heldOf(cl autoscaler.Cluster, nodes []*node.Node, lowPriority bool) []autoscaler.Reservation {
	held, dedicated := 0, 0
	for _, n := range nodes {
		switch autoscaler.NodeState(n.State) {
		case autoscaler.NodePreparing, autoscaler.NodeIdle, autoscaler.NodeRunning, autoscaler.NodeLeaving:
			if lowPriority && !n.LowPriority {
				dedicated++
			} else {
				held++
			}
		}
	}
	v := max(cl.VCPUsPerNode, 0)
	var out []autoscaler.Reservation
	if held > 0 && v > 0 {
		out = append(out, autoscaler.Reservation{Location: cl.Location, Workspace: cl.Workspace, Family: cl.Family, LowPriority: cl.LowPriority, VCPUs: held * v})
	}
	if dedicated > 0 && v > 0 {
		out = append(out, autoscaler.Reservation{Location: cl.Location, Workspace: cl.Workspace, Family: cl.Family, VCPUs: dedicated * v})
	}
	return out
}

// scaleActuator carries out the autoscaler's decisions.
type scaleActuator struct{ c *Loop }

var autoscalerPrincipal = identity.SystemPrincipal("autoscaler")

// ScaleUp implements autoscaler.Actuator: it records the nodes, then asks
// the location's provider for them.
func (a scaleActuator) ScaleUp(ctx context.Context, d autoscaler.Decision) error {
	if ws, name, ok := strings.Cut(d.Cluster, "/"); ok {
		a.c.s.Observe().ScaleDecision(ws, name, string(d.Action), decisionKind(d))
	}
	s := a.c.s
	ctx = identity.WithPrincipal(ctx, autoscalerPrincipal)
	type pending struct {
		node  *node.Node
		token string
	}
	var todo []pending
	var loc *catalog.Location
	err := s.Store().Update(ctx, func(tx store.Tx) error {
		// A run again (store.Store.Update) starts over: the nodes of a
		// run rolled back are none.
		todo = todo[:0]
		ws, name, _ := strings.Cut(d.Cluster, "/")
		comp, err := tx.GetCompute(ws, name)
		if err != nil {
			return err
		}
		if loc, err = s.Catalog().Location(comp.Location); err != nil {
			return err
		}
		size, ok := s.Catalog().Size(comp.Size)
		if !ok {
			return core.Errorf(core.EINVALID, "size %s is no longer in the catalog", comp.Size)
		}
		now := tx.Now()
		for i := 0; i < d.Count; i++ {
			seq, err := tx.NextSeq("node")
			if err != nil {
				return err
			}
			token, hash, err := identity.NewToken()
			if err != nil {
				return err
			}
			n := &node.Node{
				ID: fmt.Sprintf("%s-n%d", strings.ToLower(comp.Name), seq), Workspace: comp.Workspace, Compute: comp.Name,
				Location: loc.Name, Size: size.Name, Family: size.Family, VCPUs: size.VCPUs, GPUs: size.GPUs, MemoryGB: size.MemoryGB,
				LowPriority: comp.Tier == compute.TierLowPriority && !d.Dedicated, State: node.NodePreparing,
				JoinTokenHash: hash, JoinTokenExpires: now.Add(loc.ProvisioningDelay + a.c.cfg.JoinTimeout),
				CreatedOn: now, LastHeartbeat: now, PrivateIPAddress: "127.0.0.1", Version: 1,
			}
			if comp.IsInstance() {
				// A job slot runs on the instance's machine, which holds
				// the quota already.
				n.ID = fmt.Sprintf("%s-j%d", strings.ToLower(comp.Name), seq)
				n.Role, n.VCPUs, n.Family = node.NodeRoleJobSlot, 0, ""
				n.JoinTokenExpires = now.Add(a.c.cfg.JoinTimeout)
			}
			if loc.NodeImage != "" {
				// The node is a container of one image: the queued job's
				// it is added for, else the location's default.
				n.Image = loc.NodeImage
				if i < len(d.Images) && d.Images[i] != "" {
					n.Image = d.Images[i]
				}
			}
			if err := tx.InsertNode(n); err != nil {
				return err
			}
			todo = append(todo, pending{n, token})
		}
		return compute.AppendComputeEvent(ctx, tx, comp, core.EventScaled, d.Reason)
	})
	if err != nil {
		return err
	}
	p := s.Provider(loc)
	for _, t := range todo {
		perr, err := provisioning.Provision(ctx, s.Store(), s.Logger(), provisioning.Request{
			Provider: p, Location: loc, Node: t.node, JoinToken: t.token, ServerURL: a.c.cfg.ServerURL, ServerCA: a.c.cfg.ServerCA, Image: t.node.Image,
			Failed: func(tx store.Tx, n *node.Node, cause error) error {
				n.State, n.StateReason = node.NodeUnusable, "provisioning failed: "+core.ErrorMessage(cause)
				return tx.UpdateNode(n)
			},
		})
		if perr != nil {
			s.Logger().Warn("provisioning failed", slog.String("node", t.node.ID), slog.Any("err", perr))
			a.c.provisionFailed(d.Cluster, perr, a.c.cfg.Clock.Now())
		} else {
			a.c.provisionSucceeded(d.Cluster)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Release implements autoscaler.Actuator: the nodes stop taking work and
// leave. A node without work is released at once; the lifecycle loop
// releases the others once their work ends (and retries failed releases).
func (a scaleActuator) Release(ctx context.Context, d autoscaler.Decision) error {
	s := a.c.s
	if ws, name, ok := strings.Cut(d.Cluster, "/"); ok {
		s.Observe().ScaleDecision(ws, name, string(d.Action), decisionKind(d))
	}
	ctx = identity.WithPrincipal(ctx, autoscalerPrincipal)
	var wake []string
	var leaving []*node.Node
	var gangBackoff time.Duration
	err := s.Store().Update(ctx, func(tx store.Tx) error {
		// A run again starts over: a node marked leaving by a run
		// rolled back may have taken a job since.
		wake, leaving, gangBackoff = wake[:0], leaving[:0], 0
		for _, id := range d.NodeIDs {
			n, err := tx.GetNode(id)
			if core.ErrorCode(err) == core.ENOTFOUND {
				continue
			} else if err != nil {
				return err
			}
			n.Draining, n.StateReason = true, d.Reason
			if n.CurrentAttemptID == "" {
				n.State = node.NodeLeaving
			}
			n.Version++
			if err := tx.UpdateNode(n); err != nil {
				return err
			}
			if n.State == node.NodeLeaving {
				leaving = append(leaving, n)
			}
			if loc, err := s.Catalog().Location(n.Location); err == nil {
				gangBackoff = loc.GangBackoff
			}
			wake = append(wake, id)
			comp := &compute.Compute{Workspace: n.Workspace}
			comp.Name = n.Compute
			if err := compute.AppendComputeEvent(ctx, tx, comp, core.EventScaled, d.Reason); err != nil {
				return err
			}
		}
		return nil
	})
	s.WakeNodes(wake...)
	if err != nil {
		return err
	}
	if d.Code == autoscaler.ReasonGangTimeout {
		a.c.gangReleased(d.Cluster, d.Reason, gangBackoff, a.c.cfg.Clock.Now())
	}
	for _, n := range leaving {
		a.c.release(ctx, n)
	}
	return nil
}

// Record implements autoscaler.Actuator: a blocked or kept decision becomes
// an event when the situation starts (it comes back on every pass while it
// lasts), and quota blocks feed the scheduler's explanation of waiting jobs.
func (a scaleActuator) Record(ctx context.Context, d autoscaler.Decision) error {
	ws, name, _ := strings.Cut(d.Cluster, "/")
	a.c.s.Observe().ScaleDecision(ws, name, string(d.Action), decisionKind(d))
	key := recordKey(d)
	a.c.mu.Lock()
	if d.Action == autoscaler.ActionBlocked {
		a.c.nextBlocked[d.Cluster] = Block{Code: d.Code, Reason: d.Reason}
	}
	a.c.seen[key] = true
	same := a.c.recorded[key]
	a.c.mu.Unlock()
	if same {
		return nil
	}
	kind := recordEventKind(d)
	ctx = identity.WithPrincipal(ctx, autoscalerPrincipal)
	return a.c.s.Store().Update(ctx, func(tx store.Tx) error {
		ws, name, _ := strings.Cut(d.Cluster, "/")
		comp, err := tx.GetCompute(ws, name)
		if err != nil {
			return err
		}
		return compute.AppendComputeEvent(ctx, tx, comp, kind, d.Reason)
	})
}

// recordEventKind is the kind of event a Blocked or None decision
// becomes: a block by a budget or by quota, told by the decision's code,
// or a scale-down skipped.
func recordEventKind(d autoscaler.Decision) string {
	switch {
	case d.Action != autoscaler.ActionBlocked:
		return "scale_skipped"
	case d.Code == autoscaler.ReasonBudget:
		return core.EventBudgetBlocked
	case d.Code == autoscaler.ReasonGangTimeout:
		return core.EventGangReleased
	}
	return core.EventQuotaBlocked
}

// Block is why the autoscaler could not grow a cluster: the code the
// scheduler's explanation of waiting jobs follows, and the sentence it
// quotes.
type Block struct {
	// Code is the autoscaler's code of the decision that blocked it.
	Code autoscaler.ReasonCode
	// Reason is its sentence, "" when the cluster is not blocked.
	Reason string
}

// BlockedBy is the scheduler's code of the block: a budget, a gang
// backing off, or a quota.
func (b Block) BlockedBy() scheduler.ReasonCode {
	switch {
	case b.Reason == "":
		return ""
	case b.Code == autoscaler.ReasonBudget:
		return scheduler.ReasonBudget
	case b.Code == autoscaler.ReasonGangTimeout:
		return scheduler.ReasonGangTimeout
	}
	return scheduler.ReasonQuota
}

// recordKey identifies the situation of a Blocked or None decision. A kept
// node stays the same situation while its idle time grows, which the
// reason spells out; a block is the same while its kind and its numbers
// are (the numbers live only in the sentence, which is compared whole,
// never read).
func recordKey(d autoscaler.Decision) string {
	if d.Action == autoscaler.ActionNone {
		return d.Cluster + "\x00kept\x00" + strings.Join(d.NodeIDs, ",")
	}
	return d.Cluster + "\x00" + string(d.Action) + "\x00" + string(d.Code) + "\x00" + d.Reason
}

// beginScalePass starts collecting the blocks and recorded situations of
// an autoscaler pass.
func (c *Loop) beginScalePass() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextBlocked, c.seen = map[string]Block{}, map[string]bool{}
}

// endScalePass makes them current: a cluster no longer blocked stops
// explaining its jobs by quota, and a situation that ended is recorded
// again if it comes back.
func (c *Loop) endScalePass(complete bool, only map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case complete && only == nil:
		c.blocked, c.recorded = c.nextBlocked, c.seen
	case complete:
		// A pass over some clusters: theirs are replaced, the others'
		// kept.
		for key := range only {
			delete(c.blocked, key)
			if b, ok := c.nextBlocked[key]; ok {
				c.blocked[key] = b
			}
		}
		for rk := range c.recorded {
			if cluster, _, _ := strings.Cut(rk, "\x00"); only[cluster] {
				delete(c.recorded, rk)
			}
		}
		for rk := range c.seen {
			c.recorded[rk] = true
		}
	}
	c.nextBlocked, c.seen = map[string]Block{}, map[string]bool{}
}

// JobSlotIdleTime is how long an idle job slot of an instance stays before
// it is released.
const JobSlotIdleTime = 60 * time.Second

// instanceSlots presents an instance's job slots to the autoscaler as a
// cluster: up to max_concurrent_jobs nodes while the instance runs, none
// otherwise, holding no quota of their own.
func instanceSlots(comp *compute.Compute, key, location string, demand int) autoscaler.Cluster {
	maxSlots := 0
	if comp.Instance != nil && (comp.Instance.State == compute.InstanceRunning || comp.Instance.State == compute.InstanceJobRunning) {
		maxSlots = scheduling.MaxNodes(comp)
	}
	return autoscaler.Cluster{
		Key: key, Name: comp.Name, MaxInstances: maxSlots, IdleTimeBeforeScaleDown: JobSlotIdleTime,
		Location: location, VCPUsPerNode: 0, QueuedNodeDemand: demand,
		Deleting: comp.ProvisioningState == compute.ProvisioningDeleting,
	}
}

// DefaultProvisionEstimate is the provisioning delay the adaptive idle
// policy assumes at a location whose config gives none.
const DefaultProvisionEstimate = time.Minute

// adaptivePolicy is the adaptive idle policy of a cluster.
func adaptivePolicy(comp *compute.Compute, loc *catalog.Location, size *catalog.Size) *autoscaler.IdlePolicy {
	p := &autoscaler.IdlePolicy{Fixed: time.Duration(*comp.IdleTimeBeforeScaleDown) * time.Second, Adaptive: true,
		ProvisionDelay: loc.ProvisioningDelay, NodePricePerHour: size.PricePerHour}
	if p.ProvisionDelay <= 0 {
		p.ProvisionDelay = DefaultProvisionEstimate
	}
	if comp.Tier == compute.TierLowPriority {
		p.NodePricePerHour = size.LowPriorityPricePerHour
	}
	if comp.WaitCostPerHour != nil {
		p.WaitCostPerHour = *comp.WaitCostPerHour
	}
	return p
}

// adaptiveArrivals gives the clusters with an adaptive idle policy their
// recent arrivals: the submission times of their last jobs.
func (ctl *Loop) adaptiveArrivals(ctx context.Context, snap *autoscaler.Snapshot) error {
	s := ctl.s
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		if c.Idle == nil || !c.Idle.Adaptive {
			continue
		}
		ws, name, _ := strings.Cut(c.Key, "/")
		var jobs []*job.Job
		err := s.Store().View(ctx, func(tx store.Tx) (err error) {
			jobs, err = tx.ListJobs(job.JobFilter{Workspace: ws, Compute: name, Limit: autoscaler.AdaptiveHistory})
			return err
		})
		if err != nil {
			return err
		}
		c.RecentArrivals = make([]time.Time, 0, len(jobs))
		for _, j := range jobs {
			c.RecentArrivals = append(c.RecentArrivals, j.CreatedOn)
		}
		slices.SortFunc(c.RecentArrivals, func(a, b time.Time) int { return a.Compare(b) })
	}
	return nil
}

// longWaitDemand gives the low-priority clusters with a tier fallback the
// node demand of their queued jobs that have waited FallbackAfter.
func (ctl *Loop) longWaitDemand(ctx context.Context, snap *autoscaler.Snapshot) error {
	s := ctl.s
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		if c.FallbackAfter <= 0 || c.QueuedNodeDemand == 0 {
			continue
		}
		ws, name, _ := strings.Cut(c.Key, "/")
		var queued []*job.Job
		var now time.Time // the store's clock, which stamped CreatedOn
		err := s.Store().View(ctx, func(tx store.Tx) (err error) {
			now = tx.Now()
			queued, err = tx.ListJobs(job.JobFilter{Workspace: ws, Compute: name, Statuses: []string{job.JobQueued}})
			return err
		})
		if err != nil {
			return err
		}
		for _, j := range queued {
			if now.Sub(j.CreatedOn) >= c.FallbackAfter {
				c.LongWaitDemand += j.InstanceCount()
			}
		}
	}
	return nil
}

// decisionKind is a decision's reason label for the metrics: its code
// (demand, min_instances, idle, adaptive, deleting, max_instances, quota,
// budget, tier_fallback), or other for a decision without one.
func decisionKind(d autoscaler.Decision) string {
	if d.Code == "" {
		return "other"
	}
	return string(d.Code)
}
