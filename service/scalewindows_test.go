package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/domain/schedule"
)

func ip(v int) *int { return &v }

// windowedCluster creates the cluster cpu (min 1, max 4, idle a day: the
// idle timer never releases a node here, only a window does) with nights
// at 20:00 (max 0) and mornings at 07:00 (min 2, max 8), UTC.
func windowedCluster(h *harness) {
	h.t.Helper()
	idle := 86400
	_, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, &compute.ComputeSpec{
		Name: "cpu", Type: "amlcompute", Size: "Standard_DS3_v2",
		MinInstances: ip(1), MaxInstances: ip(4), IdleTimeBeforeScaleDown: &idle,
		ScaleWindows: []*schedule.ScaleWindow{
			{Name: "nights", Trigger: &schedule.Trigger{Type: "cron", Expression: "0 20 * * *"}, MinInstances: ip(0), MaxInstances: ip(0)},
			{Name: "mornings", Trigger: &schedule.Trigger{Type: "cron", Expression: "0 7 * * *"}, MinInstances: ip(2), MaxInstances: ip(8)},
		},
	}, "")
	if err != nil {
		h.t.Fatalf("create compute: %v", err)
	}
	if err := h.ctrl.ReconcileComputes(h.ctx); err != nil {
		h.t.Fatal(err)
	}
}

// Seed 001's nights: at 20:00 the night window scales the cluster to
// zero — its idle node at once, its busy node once its job ends, never
// killing it — a job queued at night waits naming the window, and at
// 07:00 the morning window brings the cluster back to min 2. Each change
// is one scale_window event, also across a server restart.
func TestScaleWindowNightsAndMornings(t *testing.T) {
	h := newHarness(t, "")
	h.serviceClock = true
	h.boot()
	// t0 is 09:00: mornings (min 2) is in force.
	windowedCluster(h)
	h.step(0)
	if got := h.provisions(); got != 2 {
		t.Fatalf("morning: %d nodes provisioned, want min 2", got)
	}
	h.joinAll()
	h.step(0)
	c := h.findCompute("cpu")
	if w := c.ScaleWindow; w == nil || w.Window != "mornings" || w.MinInstances != 2 || w.MaxInstances != 8 ||
		w.NextWindow != "nights" || w.NextChange == nil || !w.NextChange.Equal(time.Date(2025, 3, 1, 20, 0, 0, 0, time.UTC)) {
		t.Fatalf("scale_window at 09:00: %+v", c.ScaleWindow)
	}
	if n := h.countEvents("cpu", "scale_window: scale window mornings began: min 2, max 8 until 20:00 (UTC)"); n != 1 {
		t.Fatalf("mornings events: %d; events:\n%s", n, strings.Join(h.events("cpu"), "\n"))
	}

	// A job runs on one node into the night.
	h.submit("late", "cpu", 1, "")
	h.step(time.Minute)
	var busyNode string
	var task *node.AgentTask
	for _, id := range h.nodeIDs("cpu") {
		if tasks := h.syncStart(id); len(tasks) == 1 {
			busyNode, task = id, tasks[0]
			h.report(id, task, node.RankRunning, nil)
		}
	}
	if busyNode == "" {
		t.Fatal("the job started on no node")
	}

	// 20:00: nights. The idle node goes at once; the busy one stays.
	h.clock.Advance(time.Date(2025, 3, 1, 19, 59, 0, 0, time.UTC).Sub(h.clock.Now()))
	h.step(0)
	if len(h.releases()) != 0 {
		t.Fatalf("released before the night: %v", h.releases())
	}
	h.step(time.Minute) // 20:00 exactly
	if got := h.clock.Now(); !got.Equal(time.Date(2025, 3, 1, 20, 0, 0, 0, time.UTC)) {
		t.Fatalf("clock at %s", got)
	}
	rel := h.releases()
	if len(rel) != 1 || rel[0] == busyNode {
		t.Fatalf("at 20:00 released %v, want the idle node alone (busy %s)", rel, busyNode)
	}
	h.wantEvent("cpu", "max_instances is 0 in scale window nights until 07:00 (UTC)")
	if n := h.countEvents("cpu", "scale_window: scale window nights began: min 0, max 0 until 07:00 (UTC)"); n != 1 {
		t.Fatalf("nights events: %d", n)
	}
	if got := h.job("late").Status; got != "Running" {
		t.Fatalf("the running job is %s: a window never kills a job", got)
	}

	// A job queued at night waits, naming the window.
	h.submit("night", "cpu", 1, "")
	h.finish(busyNode, task, node.RankCompleted)
	h.step(time.Minute)
	j := h.job("night")
	if j.Status != "Queued" || j.StatusReasonCode != "scale_window" ||
		j.StatusReason != "max_instances is 0 in scale window nights until 07:00 (UTC)" {
		t.Fatalf("night job: %s %q %q", j.Status, j.StatusReasonCode, j.StatusReason)
	}
	h.step(time.Minute)
	if got := len(h.releases()); got != 2 {
		t.Fatalf("after its job ended the last node was not released: releases %v", h.releases())
	}

	// A restart at night tells nothing again.
	h.restart()
	h.step(time.Hour)
	if n := h.countEvents("cpu", "scale window nights began"); n != 1 {
		t.Fatalf("nights told %d times across a restart", n)
	}
	if h.provisions() != 2 {
		t.Fatalf("a node was provisioned at night: %d", h.provisions())
	}

	// 07:00: mornings. The queued job gets a node and min 2 comes back.
	h.clock.Advance(time.Date(2025, 3, 2, 7, 0, 0, 0, time.UTC).Sub(h.clock.Now()))
	h.step(0)
	if got := h.provisions(); got != 4 {
		t.Fatalf("morning: %d nodes provisioned in all, want 2 more", got)
	}
	if n := h.countEvents("cpu", "scale_window: scale window mornings began"); n != 2 {
		t.Fatalf("mornings told %d times, want twice (yesterday and today)", n)
	}
}

// An ARM PUT (KeepScaleWindows: Azure's format has no such key) keeps a
// cluster's windows; a Shoal document without them removes them, as any
// key left out of `create -f`.
func TestScaleWindowsKeptThroughARMPut(t *testing.T) {
	h := newHarness(t, "")
	windowedCluster(h)
	idle := 86400
	spec := func(keep bool) *compute.ComputeSpec {
		return &compute.ComputeSpec{Name: "cpu", Type: "amlcompute", Size: "Standard_DS3_v2",
			MinInstances: ip(1), MaxInstances: ip(5), IdleTimeBeforeScaleDown: &idle, KeepScaleWindows: keep}
	}
	c, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, spec(true), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ScaleWindows) != 2 || *c.MaxInstances != 5 {
		t.Fatalf("after an ARM-style PUT: max %d, windows %d, want 5 and both windows kept", *c.MaxInstances, len(c.ScaleWindows))
	}
	if c, _, err = h.svc.CreateOrApplyCompute(h.ctx, ws, spec(false), ""); err != nil {
		t.Fatal(err)
	}
	if len(c.ScaleWindows) != 0 || c.ScaleWindow != nil {
		t.Fatalf("a document without scale_windows left %d windows (%+v)", len(c.ScaleWindows), c.ScaleWindow)
	}
	h.wantEvent("cpu", "scale_windows: 2→0 window(s)")
}
