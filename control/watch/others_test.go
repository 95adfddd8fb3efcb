package watch_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/watch"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// A node provisioning past the threshold is told once on its compute; a
// machine joined by hand (waiting for its owner) and a joined node are
// not; a restart tells nothing again.
func TestProvisioningStuckOncePerNode(t *testing.T) {
	h := newHarness(t)
	h.update(func(tx store.Tx) error {
		for _, n := range []*node.Node{
			{ID: "slow", State: node.NodePreparing, StateReason: "pulling images"},
			{ID: "byhand", State: node.NodePreparing, Role: node.NodeRoleStatic},
			{ID: "joined", State: node.NodeIdle},
		} {
			n.Workspace, n.Compute, n.Location, n.Size, n.CreatedOn, n.LastHeartbeat, n.Version = "ws", "gpu", "local", "Standard_NC6", tx.Now(), tx.Now(), 1
			if err := tx.InsertNode(n); err != nil {
				return err
			}
		}
		return nil
	})
	l := h.loop()
	h.pass(l, 14*time.Minute)
	h.count(core.ResourceCompute, core.EventProvisioningStuck, 0, "before the threshold")
	h.pass(l, 2*time.Minute)
	h.pass(h.loop(), time.Minute)
	got := h.count(core.ResourceCompute, core.EventProvisioningStuck, 1, "after it and a restart")
	if !strings.Contains(got[0], "node slow (Standard_NC6 in local) has been provisioning for 16m0s") ||
		!strings.Contains(got[0], "pulling images") || !strings.HasPrefix(got[0], "gpu: ") {
		t.Fatalf("provisioning_stuck = %q, want one event for node slow on gpu", got)
	}
}

// sample appends a GPU sample of job name as an agent writes it.
func (h *harness) sample(name string, pcts ...int) {
	h.t.Helper()
	var parts []string
	for i, p := range pcts {
		parts = append(parts, fmt.Sprintf("GPU %d NVIDIA H100 80GB HBM3 %d%%", i, p))
	}
	h.update(func(tx store.Tx) error {
		return tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: "ws", ResourceType: core.ResourceJob, ResourceName: name,
			Kind: core.EventGPUUtilization, Reason: "attempt 1, rank 0 on n1: " + strings.Join(parts, ", ")})
	})
}

// A running job whose GPUs stay under the threshold for the whole window
// is told once per window; a job with one busy sample is not; the gauges
// get each running job's last sample.
func TestGPUUnderutilizedOncePerWindow(t *testing.T) {
	h := newHarness(t)
	h.update(func(tx store.Tx) error {
		// idle and busy run on GPU nodes; oncpu on a node without GPUs
		// (its samples, were there any, are not watched).
		for i, n := range []string{"idle", "busy", "oncpu"} {
			j := h.submit(tx, n)
			start := tx.Now()
			j.Status, j.StartTime = job.JobRunning, &start
			if err := tx.UpdateJob(j); err != nil {
				return err
			}
			gpus := 2
			if n == "oncpu" {
				gpus = 0
			}
			if err := tx.InsertNode(&node.Node{ID: fmt.Sprintf("n%d", i), Workspace: "ws", Compute: "gpu", Location: "local", GPUs: gpus,
				State: node.NodeRunning, CurrentJobName: n, CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	g := &gauges{}
	l := h.loop()
	l.SetGauges(g)
	for i := range 7 { // a sample every 5 minutes for 30 minutes
		h.sample("idle", 10, 0)
		h.sample("oncpu", 0)
		busy := 20
		if i == 3 {
			busy = 90
		}
		h.sample("busy", busy)
		if i < 6 {
			h.pass(l, 5*time.Minute)
		}
		if i == 4 { // 25 minutes
			if got := h.events(core.ResourceJob, core.EventGPUUnderutilized); len(got) != 0 {
				t.Fatalf("before a whole window: %q", got)
			}
		}
	}
	h.pass(l, 15*time.Second)
	got := h.events(core.ResourceJob, core.EventGPUUnderutilized)
	if names(got) != "idle" || !strings.Contains(got[0], "stayed under 50% utilisation for 30m0s (mean 5%") {
		t.Fatalf("gpu_underutilized = %q, want one for the idle job", got)
	}
	g.mu.Lock()
	last := g.last
	g.mu.Unlock()
	want := map[string]float64{"idle": 5, "busy": 20}
	if len(last) != 2 {
		t.Fatalf("gauges = %+v, want both running jobs", last)
	}
	for _, s := range last {
		if s.Percent != want[s.Job] || s.Compute != "gpu" {
			t.Errorf("gauge %+v, want %v%% on gpu", s, want[s.Job])
		}
	}
	// Still idle: told again only once a whole new window has passed.
	for range 5 {
		h.sample("idle", 0, 0)
		h.pass(h.loop(), 5*time.Minute)
	}
	if got := h.events(core.ResourceJob, core.EventGPUUnderutilized); len(got) != 1 {
		t.Fatalf("within the next window: %q", got)
	}
	h.sample("idle", 0, 0)
	h.pass(h.loop(), 6*time.Minute)
	if got := h.events(core.ResourceJob, core.EventGPUUnderutilized); len(got) != 2 {
		t.Fatalf("after another whole window: %q, want a second event", got)
	}
}

// Samples are read as agents write them; anything else is no sample.
func TestSampleMean(t *testing.T) {
	for reason, want := range map[string]float64{
		"attempt 1, rank 0 on n1: GPU 0 NVIDIA A100 87%, GPU 1 NVIDIA A100 91%": 89,
		"attempt 2, rank 1 on n2: GPU 0  0%":                                    0,
	} {
		if got, ok := watch.SampleMean(reason); !ok || got != want {
			t.Errorf("SampleMean(%q) = %v, %v; want %v", reason, got, ok, want)
		}
	}
	// A name holding ", GPU " makes the sample unreadable: no sample,
	// rather than a wrong one.
	for _, bad := range []string{"attempt 1, rank 0 on n1: GPU 0 Card 3, GPU 9 100%", "", "attempt 1: GPU 0 A100 187%", "attempt 1: GPU 0 A100 -3%", "attempt 1: GPU 0 A100", "no sample at all", "attempt 1: GPU 0 A100 9999999999999999999999%"} {
		if got, ok := watch.SampleMean(bad); ok {
			t.Errorf("SampleMean(%q) = %v, want no sample", bad, got)
		}
	}
}

// An instance idle shutdown stops within the warning is told once per
// deadline: a postponement moves the deadline, and the new one is told
// when its window opens.
func TestIdleShutdownSoonOncePerDeadline(t *testing.T) {
	h := newHarness(t)
	h.update(func(tx store.Tx) error {
		minutes := 60
		since := tx.Now()
		c := &compute.Compute{ComputeSpec: compute.ComputeSpec{Name: "nb", Type: compute.ComputeTypeInstance, Size: "Standard_DS3_v2"},
			Workspace: "ws", Version: 1, ProvisioningState: compute.ProvisioningSucceeded, CreatedOn: tx.Now(), ModifiedOn: tx.Now(),
			Instance: &compute.InstanceStatus{State: compute.InstanceRunning, IdleSince: &since}}
		c.IdleTimeBeforeShutdownMinutes = &minutes
		return tx.InsertCompute(c)
	})
	l := h.loop()
	h.pass(l, 49*time.Minute)
	h.count(core.ResourceCompute, core.EventIdleShutdownSoon, 0, "11 minutes before")
	h.pass(l, 2*time.Minute)
	h.pass(h.loop(), time.Minute)
	got := h.count(core.ResourceCompute, core.EventIdleShutdownSoon, 1, "9 minutes before, and after a restart")
	if !strings.Contains(got[0], "in 9m0s; idle_time_before_shutdown_minutes 60") || !strings.Contains(got[0], "postpone-shutdown -n nb") {
		t.Fatalf("idle_shutdown_soon = %q, want one 9 minutes before", got)
	}
	// The owner postpones to 2 h: the new deadline is told 10 min before.
	h.update(func(tx store.Tx) error {
		c, err := tx.GetCompute("ws", "nb")
		if err != nil {
			return err
		}
		until := h.clock.Now().Add(68 * time.Minute)
		c.Instance.ShutdownPostponedUntil = &until
		return tx.UpdateCompute(c)
	})
	h.pass(l, 57*time.Minute)
	h.count(core.ResourceCompute, core.EventIdleShutdownSoon, 1, "11 minutes before the postponed deadline")
	h.pass(l, 2*time.Minute)
	h.count(core.ResourceCompute, core.EventIdleShutdownSoon, 2, "9 minutes before the postponed deadline")
}
