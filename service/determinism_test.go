package service_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/autoscaler"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/provider/fake"
	"github.com/shoal-ml/shoal/sim"
	"github.com/shoal-ml/shoal/store"
)

// The server and the simulator decide the same: the same recorded event
// sequence (jobs arriving and running for given times, nodes ready a
// provisioning delay after they are asked for) played through the real
// server — store, controller, agents' reports — and through shoal sim
// gives the same scale-ups and releases at the same times, and the same
// wait for every job.
func TestServerAndSimulatorAgree(t *testing.T) {
	const delay = 3 * time.Minute
	jobs := []sim.Job{
		{ID: "j0", Submit: 0, Duration: 5 * time.Minute, Nodes: 1},
		{ID: "j1", Submit: time.Minute, Duration: 3 * time.Minute, Nodes: 1},
		{ID: "j2", Submit: 2 * time.Minute, Duration: 10 * time.Minute, Nodes: 2},
		{ID: "j3", Submit: 9 * time.Minute, Duration: time.Minute, Nodes: 1},
		{ID: "j4", Submit: 20 * time.Minute, Duration: 2 * time.Minute, Nodes: 1},
		{ID: "j5", Submit: 21 * time.Minute, Duration: 30 * time.Second, Nodes: 1},
		{ID: "j6", Submit: 40 * time.Minute, Duration: 5 * time.Minute, Nodes: 3},
		{ID: "j7", Submit: 41 * time.Minute, Duration: time.Minute, Nodes: 1},
	}
	cfg := sim.Config{MaxInstances: 4, IdleTimeBeforeScaleDown: 2 * time.Minute, ProvisionDelay: delay, Series: true}
	want, err := sim.Run(jobs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Nodes asked for and released, per time.
	type change struct{ up, down int }
	log := func(m map[time.Duration]*change) string {
		var times []time.Duration
		for at := range m {
			times = append(times, at)
		}
		slices.Sort(times)
		var out []string
		for _, at := range times {
			if m[at].up > 0 {
				out = append(out, fmt.Sprintf("%s +%d", at, m[at].up))
			}
			if m[at].down > 0 {
				out = append(out, fmt.Sprintf("%s -%d", at, m[at].down))
			}
		}
		return strings.Join(out, "\n")
	}
	at := func(m map[time.Duration]*change, t time.Duration) *change {
		if m[t] == nil {
			m[t] = &change{}
		}
		return m[t]
	}
	simChanges := map[time.Duration]*change{}
	for _, d := range want.Decisions {
		switch d.Action {
		case autoscaler.ActionScaleUp:
			at(simChanges, d.At).up += d.Count
		case autoscaler.ActionRelease:
			at(simChanges, d.At).down += len(d.NodeIDs)
		}
	}

	// The server, driven through the same events. Leases are long: the
	// agents here report only when something happens.
	h := newHarness(t, "node_lease: 24h\nnode_lease_grace: 24h\n")
	h.compute("cpu", 0, 4, 120)
	start := h.clock.Now()
	type running struct {
		node string
		task *node.AgentTask
		ends time.Time
	}
	var runs []running
	asked := map[string]fake.Provisioned{}
	next := 0
	for steps := 0; ; steps++ {
		if steps > 500 {
			t.Fatal("the server replay does not end")
		}
		now := h.clock.Now()
		// Jobs end and nodes become ready; then arrivals.
		runs = slices.DeleteFunc(runs, func(r running) bool {
			if r.ends.After(now) {
				return false
			}
			h.finish(r.node, r.task, node.RankCompleted)
			return true
		})
		for _, p := range h.prov.TakeProvisioned() {
			asked[p.Req.Node.ID] = p
		}
		for _, n := range h.nodes("cpu") {
			if p, ok := asked[n.ID]; ok && !n.CreatedOn.Add(delay).After(now) {
				h.join(p)
				delete(asked, n.ID)
			}
		}
		for next < len(jobs) && !start.Add(jobs[next].Submit).After(now) {
			h.submit(jobs[next].ID, "cpu", jobs[next].Nodes, "")
			next++
		}
		h.pass()
		// Placed ranks start at once, as the simulator's do.
		for _, n := range h.nodes("cpu") {
			if a := h.agents[n.ID]; a != nil && n.CurrentAttemptID != "" {
				for _, task := range h.syncStart(n.ID) {
					h.report(n.ID, task, node.RankRunning, nil)
					d := jobs[slices.IndexFunc(jobs, func(j sim.Job) bool { return j.ID == task.JobName })].Duration
					runs = append(runs, running{n.ID, task, now.Add(d)})
				}
			}
		}
		// The next event, as the simulator computes it.
		var times []time.Time
		if next < len(jobs) {
			times = append(times, start.Add(jobs[next].Submit))
		}
		for _, r := range runs {
			times = append(times, r.ends)
		}
		for _, n := range h.nodes("cpu") {
			switch {
			case n.State == node.NodePreparing:
				times = append(times, n.CreatedOn.Add(delay))
			case n.State == node.NodeIdle && n.IdleSince != nil:
				times = append(times, n.IdleSince.Add(2*time.Minute))
			}
		}
		times = slices.DeleteFunc(times, func(x time.Time) bool { return !x.After(now) })
		if len(times) == 0 {
			break
		}
		h.clock.Advance(slices.MinFunc(times, func(a, b time.Time) int { return a.Compare(b) }).Sub(now))
	}

	// What the server did, from its usage ledger: nodes asked for and released.
	var usage []*node.NodeUsage
	if err := h.store.View(h.ctx, func(tx store.Tx) (err error) {
		usage, err = tx.ListNodeUsage(ws, start.Add(-time.Hour), h.clock.Now().Add(time.Hour))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	serverChanges := map[time.Duration]*change{}
	for _, u := range usage {
		at(serverChanges, u.CreatedOn.Sub(start)).up++
		if u.ReleasedOn != nil {
			at(serverChanges, u.ReleasedOn.Sub(start)).down++
		}
	}
	if got, want := log(serverChanges), log(simChanges); got != want {
		t.Errorf("the server and the simulator decided differently:\nserver:\n%s\nsimulator:\n%s", got, want)
	}
	for i, j := range jobs {
		v := h.job(j.ID)
		if v.StartTime == nil {
			t.Fatalf("%s never started on the server", j.ID)
		}
		if got := v.StartTime.Sub(v.CreatedOn); got != want.Waits[i].Wait {
			t.Errorf("%s waited %s on the server, %s in the simulator", j.ID, got, want.Waits[i].Wait)
		}
	}
}
