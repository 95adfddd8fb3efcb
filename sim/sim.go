// Package sim replays a job trace through Shoal's own scheduler
// (scheduler.Schedule) and autoscaler (autoscaler.Plan) — the code the
// server runs, not a model of it — on one cluster whose nodes take a
// fixed provisioning delay, with a simulated clock. It measures what an
// idle-timeout policy costs (node-hours from the start of provisioning to
// release) against what it saves in queue wait (submit to start).
//
// One pass at each event time, in this order: nodes finish their jobs and
// nodes finish provisioning (both become idle), jobs arrive, the
// scheduler places queued jobs on the nodes idle longest, the autoscaler
// provisions nodes while queued jobs outnumber nodes being provisioned
// and releases idle nodes whose idle timer has expired. Events are the
// next arrival, job end, node ready and idle-timer expiry.
package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/shoal-ml/shoal/decide/autoscaler"
	"github.com/shoal-ml/shoal/decide/scheduler"
)

// epoch is the simulated time of a trace's start (any fixed instant: only
// differences matter).
var epoch = time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)

// Config is the cluster a trace is replayed on and its idle policy.
type Config struct {
	// MinInstances and MaxInstances bound the cluster; MaxInstances 0 is
	// unbounded.
	MinInstances, MaxInstances int
	// IdleTimeBeforeScaleDown is the fixed idle timeout (Azure's default
	// is 120 s); with Adaptive it is the fallback while the arrival
	// history is too short.
	IdleTimeBeforeScaleDown time.Duration
	// Adaptive chooses the idle timeout from the recent arrival process
	// (autoscaler.AdaptivePolicy).
	Adaptive bool
	// WaitCostPerHour is what an hour of a waiting job is worth, for the
	// adaptive policy; 0 takes the default.
	WaitCostPerHour float64
	// ProvisionDelay is how long a new node takes to become ready.
	ProvisionDelay time.Duration
	// PricePerHour is a node's price (the size's, on the cluster's tier).
	PricePerHour float64
	// Series, when set, records the node count after every event (for
	// the plot).
	Series bool
}

// Policy names the idle policy of a config: "fixed:120s" or "adaptive".
func (c Config) Policy() string {
	if c.Adaptive {
		return "adaptive"
	}
	return "fixed:" + strconv.FormatFloat(c.IdleTimeBeforeScaleDown.Seconds(), 'f', -1, 64) + "s"
}

// Wait is one job's queue wait.
type Wait struct {
	ID   string        `json:"id"`
	Wait time.Duration `json:"wait_ns"`
}

// Point is the node count at a time (seconds from the trace's start).
type Point struct {
	T     float64 `json:"t"`
	Nodes int     `json:"nodes"`
	Busy  int     `json:"busy"`
}

// Result is what a replay measured.
type Result struct {
	Policy        string  `json:"policy"`
	Jobs          int     `json:"jobs"`
	NodeHours     float64 `json:"node_hours"`
	BusyNodeHours float64 `json:"busy_node_hours"`
	IdleNodeHours float64 `json:"idle_node_hours"`
	Cost          float64 `json:"cost"`
	Waited        int     `json:"jobs_waited"`
	WaitMean      float64 `json:"wait_mean_s"`
	WaitP50       float64 `json:"wait_p50_s"`
	WaitP95       float64 `json:"wait_p95_s"`
	WaitMax       float64 `json:"wait_max_s"`
	ScaleUps      int     `json:"scale_ups"`
	ScaleDowns    int     `json:"scale_downs"`
	Waits         []Wait  `json:"-"`
	Series        []Point `json:"-"`
	// Decisions are the autoscaler's decisions with their reasons and
	// times, for the determinism test and for reading; only with
	// Config.Series.
	Decisions []Decision `json:"-"`
}

// Decision is an autoscaler decision and when (from the trace's start)
// it was taken.
type Decision struct {
	At time.Duration
	autoscaler.Decision
}

// node is a simulated node.
type node struct {
	id        string
	created   time.Time
	readyAt   time.Time
	ready     bool
	idleSince time.Time
	job       int // index of the running job, or -1
	endsAt    time.Time
}

const clusterKey = "sim/cluster"

// Run replays jobs (sorted by Submit) on a cluster and returns what it
// measured. It is deterministic: the same jobs and config give the same
// result.
func Run(jobs []Job, cfg Config) (*Result, error) {
	if cfg.MaxInstances <= 0 {
		cfg.MaxInstances = math.MaxInt32
	}
	if cfg.ProvisionDelay < 0 {
		return nil, fmt.Errorf("provision delay %s must not be negative", cfg.ProvisionDelay)
	}
	if cfg.IdleTimeBeforeScaleDown < 0 {
		return nil, fmt.Errorf("idle_time_before_scale_down %s must not be negative", cfg.IdleTimeBeforeScaleDown)
	}
	if cfg.MinInstances < 0 || cfg.MinInstances > cfg.MaxInstances {
		return nil, fmt.Errorf("min_instances %d must be between 0 and max_instances %d", cfg.MinInstances, cfg.MaxInstances)
	}
	for i, j := range jobs {
		if j.Nodes < 1 {
			return nil, fmt.Errorf("job %s: instance_count %d must be ≥ 1", j.ID, j.Nodes)
		}
		if j.Duration < 0 || j.Submit < 0 {
			return nil, fmt.Errorf("job %s: submit time %s and duration %s must not be negative", j.ID, j.Submit, j.Duration)
		}
		if j.Nodes > cfg.MaxInstances {
			return nil, fmt.Errorf("job %s needs %d nodes; max_instances is %d", j.ID, j.Nodes, cfg.MaxInstances)
		}
		if i > 0 && j.Submit < jobs[i-1].Submit {
			return nil, fmt.Errorf("jobs are not in submission order at %s", j.ID)
		}
	}
	r := &Result{Policy: cfg.Policy(), Jobs: len(jobs), Waits: make([]Wait, len(jobs))}
	var (
		nodes    []*node
		queue    []int // queued job indexes, in submission order
		next     int   // next job to arrive
		started  = make([]bool, len(jobs))
		finished = make([]bool, len(jobs))
		arrivals []time.Time
		seq      int
		now      = epoch
		done     int
	)
	policy := autoscaler.IdlePolicy{Fixed: cfg.IdleTimeBeforeScaleDown, Adaptive: cfg.Adaptive,
		ProvisionDelay: cfg.ProvisionDelay, NodePricePerHour: cfg.PricePerHour, WaitCostPerHour: cfg.WaitCostPerHour}
	release := func(n *node) {
		r.NodeHours += now.Sub(n.created).Hours()
		r.ScaleDowns++
		nodes = slices.DeleteFunc(nodes, func(x *node) bool { return x == n })
	}
	for done < len(jobs) || len(nodes) > cfg.MinInstances {
		// 1. Jobs end and nodes become ready: both idle from that moment.
		for _, n := range nodes {
			if n.job >= 0 && !n.endsAt.After(now) {
				if !finished[n.job] {
					finished[n.job] = true
					done++
				}
				n.job, n.idleSince = -1, n.endsAt
			}
			if !n.ready && !n.readyAt.After(now) {
				n.ready, n.idleSince = true, n.readyAt
			}
		}
		// 2. Arrivals.
		for next < len(jobs) && !epoch.Add(jobs[next].Submit).After(now) {
			queue = append(queue, next)
			arrivals = append(arrivals, epoch.Add(jobs[next].Submit))
			next++
		}
		// 3. The scheduler places queued jobs on free nodes.
		if len(queue) > 0 {
			snap := scheduler.Snapshot{Clusters: map[string]scheduler.ClusterState{clusterKey: {MaxInstances: cfg.MaxInstances}}}
			byID := map[string]*node{}
			for _, n := range nodes {
				byID[n.id] = n
				snap.Nodes = append(snap.Nodes, scheduler.Node{ID: n.id, Cluster: clusterKey, Free: n.ready && n.job < 0, IdleSince: n.idleSince})
			}
			for _, q := range queue {
				snap.Jobs = append(snap.Jobs, scheduler.Job{ID: strconv.Itoa(q), Cluster: clusterKey, Seq: int64(q), InstanceCount: jobs[q].Nodes})
			}
			res := scheduler.Schedule(snap)
			for _, p := range res.Placements {
				q, _ := strconv.Atoi(p.JobID)
				j := jobs[q]
				for _, id := range p.NodeIDs {
					n := byID[id]
					n.job, n.endsAt = q, now.Add(j.Duration)
				}
				started[q] = true
				w := now.Sub(epoch.Add(j.Submit))
				r.Waits[q] = Wait{ID: j.ID, Wait: w}
				r.BusyNodeHours += j.Duration.Hours() * float64(j.Nodes)
				if j.Duration == 0 {
					// A job of no length frees its node at once.
					for _, id := range p.NodeIDs {
						byID[id].job, byID[id].idleSince = -1, now
					}
					finished[q] = true
					done++
				}
			}
			queue = slices.DeleteFunc(queue, func(q int) bool { return started[q] })
		}
		// 4. The autoscaler: scale up for the queue, release expired idle nodes.
		demand := 0
		for _, q := range queue {
			demand += jobs[q].Nodes
		}
		cl := autoscaler.Cluster{Key: clusterKey, Name: "sim", MinInstances: cfg.MinInstances, MaxInstances: cfg.MaxInstances,
			IdleTimeBeforeScaleDown: cfg.IdleTimeBeforeScaleDown, Location: "sim", VCPUsPerNode: 0, QueuedNodeDemand: demand,
			Idle: &policy, RecentArrivals: recent(arrivals, now)}
		byID := map[string]*node{}
		for _, n := range nodes {
			byID[n.id] = n
			an := autoscaler.Node{ID: n.id, CreatedOn: n.created}
			switch {
			case !n.ready:
				an.State = autoscaler.NodePreparing
			case n.job >= 0:
				an.State = autoscaler.NodeRunning
			default:
				an.State, an.IdleSince = autoscaler.NodeIdle, n.idleSince
			}
			cl.Nodes = append(cl.Nodes, an)
		}
		for _, d := range autoscaler.Plan(autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cl}}, now) {
			if cfg.Series {
				r.Decisions = append(r.Decisions, Decision{At: now.Sub(epoch), Decision: d})
			}
			switch d.Action {
			case autoscaler.ActionScaleUp:
				for range d.Count {
					seq++
					nodes = append(nodes, &node{id: fmt.Sprintf("n%08d", seq), created: now, readyAt: now.Add(cfg.ProvisionDelay), job: -1})
					r.ScaleUps++
				}
			case autoscaler.ActionRelease:
				for _, id := range d.NodeIDs {
					if n := byID[id]; n != nil {
						release(n)
					}
				}
			}
		}
		if cfg.Series {
			busy := 0
			for _, n := range nodes {
				if n.job >= 0 {
					busy++
				}
			}
			if k := len(r.Series); k == 0 || r.Series[k-1].Nodes != len(nodes) || r.Series[k-1].Busy != busy {
				r.Series = append(r.Series, Point{T: now.Sub(epoch).Seconds(), Nodes: len(nodes), Busy: busy})
			}
		}
		// 5. The next event.
		t, ok := time.Time{}, false
		at := func(x time.Time) {
			if x.After(now) && (!ok || x.Before(t)) {
				t, ok = x, true
			}
		}
		if next < len(jobs) {
			at(epoch.Add(jobs[next].Submit))
		}
		// Idle nodes in line for the next jobs: the one idle longest first,
		// as the scheduler takes them (and the autoscaler ranks them).
		var idle []*node
		for _, n := range nodes {
			switch {
			case !n.ready:
				at(n.readyAt)
			case n.job >= 0:
				at(n.endsAt)
			default:
				idle = append(idle, n)
			}
		}
		if len(nodes) > cfg.MinInstances {
			slices.SortStableFunc(idle, func(a, b *node) int { return cmp.Or(a.idleSince.Compare(b.idleSince), cmp.Compare(a.id, b.id)) })
			for rank, n := range idle {
				expiry := n.idleSince.Add(policy.NodeThreshold(cl, autoscaler.Node{ID: n.id, State: autoscaler.NodeIdle, IdleSince: n.idleSince}, rank+1))
				at(expiry)
				if !expiry.After(now) {
					// Expired but kept this pass (min_instances or a
					// queued job): what keeps it changes only with the
					// events above, so looking again is a safety net, at
					// doubling intervals — a second after the expiry, then
					// 2, 4, ... — not every second of a wait that may last
					// weeks (found by FuzzTraces: a job waiting 1,000 h
					// behind another took 3.6 million passes).
					at(now.Add(max(time.Second, now.Sub(expiry))))
				}
			}
		}
		if !ok {
			if done < len(jobs) {
				return nil, fmt.Errorf("replay stalled at %s with %d jobs queued and %d nodes", now.Sub(epoch), len(queue), len(nodes))
			}
			break
		}
		now = t
	}
	for _, n := range nodes {
		r.NodeHours += now.Sub(n.created).Hours()
	}
	r.IdleNodeHours = r.NodeHours - r.BusyNodeHours
	r.Cost = r.NodeHours * cfg.PricePerHour
	r.summarize()
	return r, nil
}

// recent returns the last arrivals up to now, as many as the adaptive
// policy looks at (the server gives it the same).
func recent(arrivals []time.Time, now time.Time) []time.Time {
	if len(arrivals) > autoscaler.AdaptiveHistory {
		return arrivals[len(arrivals)-autoscaler.AdaptiveHistory:]
	}
	return arrivals
}

// summarize computes the wait statistics.
func (r *Result) summarize() {
	if len(r.Waits) == 0 {
		return
	}
	w := make([]float64, len(r.Waits))
	sum := 0.0
	for i, x := range r.Waits {
		w[i] = x.Wait.Seconds()
		sum += w[i]
		if x.Wait > 0 {
			r.Waited++
		}
	}
	sort.Float64s(w)
	r.WaitMean = sum / float64(len(w))
	r.WaitP50 = quantile(w, 0.50)
	r.WaitP95 = quantile(w, 0.95)
	r.WaitMax = w[len(w)-1]
}

// quantile is the nearest-rank quantile of sorted values.
func quantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// Round rounds the figures for display: hours and money to 0.01, waits
// to 0.1 s.
func (r *Result) Round() {
	r2 := func(f float64) float64 { return math.Round(f*100) / 100 }
	r.NodeHours, r.BusyNodeHours, r.IdleNodeHours, r.Cost = r2(r.NodeHours), r2(r.BusyNodeHours), r2(r.IdleNodeHours), r2(r.Cost)
	r1 := func(f float64) float64 { return math.Round(f*10) / 10 }
	r.WaitMean, r.WaitP50, r.WaitP95, r.WaitMax = r1(r.WaitMean), r1(r.WaitP50), r1(r.WaitP95), r1(r.WaitMax)
}
