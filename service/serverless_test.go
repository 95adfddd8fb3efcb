package service_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/serverless"
	nodekind "github.com/shoal-ml/shoal/domain/node"
)

// serverlessJob is a job with no compute: serverless.
func serverlessJob(name string, res *job.JobResources, tier string) *job.JobSpec {
	s := &job.JobSpec{Name: name, Command: command(name), Resources: res}
	if tier != "" {
		s.QueueSettings = &job.QueueSettings{JobTier: tier}
	}
	return s
}

// A job without a compute creates its pool at submit, scales it from
// zero, runs, and the pool goes back to zero after the default idle time;
// the loops treat the pool as any cluster.
func TestServerlessJobRunsAndScalesBackToZero(t *testing.T) {
	h := newHarness(t, "")
	j := h.submitSpec(serverlessJob("j1", nil, ""))
	const pool = "sls-ds1v2-std"
	if j.Compute != pool {
		t.Fatalf("job compute %q, want %q", j.Compute, pool)
	}
	c := h.findCompute(pool)
	if !c.Serverless || c.Size != "Standard_DS1_v2" || c.Tier != compute.TierDedicated || *c.MinInstances != 0 ||
		*c.IdleTimeBeforeScaleDown != compute.DefaultIdleTimeBeforeScaleDown || c.CreatedBy != serverless.Creator {
		t.Fatalf("pool: serverless %v size %s tier %s min %d idle %d by %q", c.Serverless, c.Size, c.Tier, *c.MinInstances, *c.IdleTimeBeforeScaleDown, c.CreatedBy)
	}
	// The built-in quota: 100 dedicated vCPUs of the family, 1 vCPU a node.
	if *c.MaxInstances != 100 {
		t.Errorf("pool max_instances %d, want 100 (the family quota / 1 vCPU)", *c.MaxInstances)
	}
	h.wantEvent(pool, "serverless pool")

	// Created, as any new cluster, then Succeeded by the next pass's
	// reconcile; the pass after scales it up.
	h.step(0)
	if c := h.findCompute(pool); c.ProvisioningState != compute.ProvisioningSucceeded {
		t.Fatalf("pool is %s after a pass, want Succeeded", c.ProvisioningState)
	}
	h.step(0)
	node := oneNode(t, h)
	h.step(0)
	h.finish(node, runOn(t, h, node, "j1"), nodekind.RankCompleted)
	h.wantJob("j1", job.JobCompleted)

	h.step(119 * time.Second)
	if r := h.releases(); len(r) != 0 {
		t.Fatalf("released after 119 s: %v", r)
	}
	h.step(time.Second)
	if r := h.releases(); !slices.Equal(r, []string{node}) {
		t.Fatalf("releases after the default idle time: %v, want [%s]", r, node)
	}
	if ns := h.nodes(pool); len(ns) != 0 {
		t.Fatalf("pool nodes after idle: %+v", ns)
	}
}

// compute list hides serverless pools unless asked; show finds them.
func TestServerlessPoolListedOnlyWhenAsked(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 120)
	h.submitSpec(serverlessJob("j1", nil, "spot"))
	names := func(include bool) []string {
		list, err := h.svc.ListComputes(h.ctx, compute.ComputeFilter{Workspace: ws, IncludeServerless: include})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range list {
			out = append(out, c.Name)
		}
		return out
	}
	if got := names(false); !slices.Equal(got, []string{"cpu"}) {
		t.Errorf("list: %v, want [cpu]", got)
	}
	if got := names(true); !slices.Equal(got, []string{"cpu", "sls-ds1v2-spot"}) {
		t.Errorf("list --include-serverless: %v, want [cpu sls-ds1v2-spot]", got)
	}
	c, err := h.svc.FindCompute(h.ctx, ws, "sls-ds1v2-spot")
	if err != nil || !c.Serverless || c.Tier != compute.TierLowPriority {
		t.Fatalf("show the pool: %+v, %v", c, err)
	}
}

// A second job of the same size and tier uses the same pool; a job
// needing more nodes raises its max_instances; other sizes and tiers get
// pools of their own.
func TestServerlessPoolsPerSizeAndTier(t *testing.T) {
	h := newHarness(t, `
locations:
  - name: local
    quota:
      dedicated_vcpus_per_family:
        standardDSv2Family: 8
`)
	h.submitSpec(serverlessJob("a", &job.JobResources{InstanceType: "Standard_DS3_v2"}, ""))
	if c := h.findCompute("sls-ds3v2-std"); *c.MaxInstances != 2 {
		t.Fatalf("max_instances %d under an 8-vCPU quota of 4-vCPU nodes, want 2", *c.MaxInstances)
	}
	h.submitSpec(serverlessJob("b", &job.JobResources{InstanceType: "standard_ds3_v2", InstanceCount: 3}, "standard"))
	if c := h.findCompute("sls-ds3v2-std"); *c.MaxInstances != 3 {
		t.Fatalf("max_instances %d after a 3-node job, want 3", *c.MaxInstances)
	}
	h.submitSpec(serverlessJob("c", &job.JobResources{InstanceType: "Standard_DS3_v2"}, "spot"))
	list, err := h.svc.ListComputes(h.ctx, compute.ComputeFilter{Workspace: ws, IncludeServerless: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range list {
		got = append(got, c.Name)
	}
	if !slices.Equal(got, []string{"sls-ds3v2-spot", "sls-ds3v2-std"}) {
		t.Fatalf("pools %v", got)
	}
}

// The 3-node job above needs 12 vCPUs under an 8-vCPU quota: it waits
// with the cluster's quota reason, as on any cluster.
func TestServerlessQuotaReason(t *testing.T) {
	h := newHarness(t, `
locations:
  - name: local
    quota:
      dedicated_vcpus_per_family:
        standardDSv2Family: 8
`)
	h.submitSpec(serverlessJob("big", &job.JobResources{InstanceType: "Standard_DS3_v2", InstanceCount: 3}, ""))
	h.step(0)
	h.step(time.Second)
	h.step(time.Second)
	j := h.wantJob("big", job.JobQueued)
	if j.StatusReasonCode != string(scheduler.ReasonQuota) || !strings.Contains(j.StatusReason, "standardDSv2Family") {
		t.Fatalf("reason %q (%s), want the quota", j.StatusReason, j.StatusReasonCode)
	}
}

// An unknown size is refused at submit naming resources.instance_type,
// and nothing is written.
func TestServerlessUnknownSizeRefused(t *testing.T) {
	h := newHarness(t, "")
	_, _, err := h.svc.SubmitJob(h.ctx, ws, serverlessJob("j1", &job.JobResources{InstanceType: "Standard_DS9_v2"}, ""))
	var e *core.Error
	if core.ErrorCode(err) != core.EINVALID || !errors.As(err, &e) || e.Field != "resources.instance_type" || !strings.Contains(e.Message, "Standard_DS1_v2") {
		t.Fatalf("unknown size: %v", err)
	}
	if _, err := h.svc.FindJob(h.ctx, ws, "j1"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("the refused job was stored: %v", err)
	}
	list, _ := h.svc.ListComputes(h.ctx, compute.ComputeFilter{Workspace: ws, IncludeServerless: true})
	if len(list) != 0 {
		t.Fatalf("a refused job left computes: %d", len(list))
	}
}

// Users cannot change a pool; they can delete it only once no unfinished
// job uses it; a cluster of theirs that holds the pool's name is reported.
func TestServerlessPoolRules(t *testing.T) {
	h := newHarness(t, "")
	h.submitSpec(serverlessJob("j1", nil, ""))
	const pool = "sls-ds1v2-std"
	two := 2
	if _, err := h.svc.UpdateCompute(h.ctx, ws, pool, &compute.ComputeUpdate{MaxInstances: &two}, ""); core.ErrorCode(err) != core.ECONFLICT || !strings.Contains(core.ErrorMessage(err), "serverless") {
		t.Fatalf("update a pool: %v", err)
	}
	if _, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, &compute.ComputeSpec{Name: pool, Type: "amlcompute", Size: "Standard_DS1_v2"}, ""); core.ErrorCode(err) != core.ECONFLICT {
		t.Fatalf("apply over a pool: %v", err)
	}
	if _, err := h.svc.DeleteCompute(h.ctx, ws, pool, ""); core.ErrorCode(err) != core.ECONFLICT || !strings.Contains(core.ErrorMessage(err), "j1") {
		t.Fatalf("delete a pool a queued job uses: %v", err)
	}
	if _, err := h.svc.CancelJob(h.ctx, ws, "j1"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.DeleteCompute(h.ctx, ws, pool, ""); err != nil {
		t.Fatalf("delete an unused pool: %v", err)
	}

	// A user's cluster named like a pool is never taken for one.
	h.compute("sls-ds1v2-spot", 0, 1, 120)
	_, _, err := h.svc.SubmitJob(h.ctx, ws, serverlessJob("j2", nil, "spot"))
	if core.ErrorCode(err) != core.ECONFLICT || !strings.Contains(core.ErrorMessage(err), "sls-ds1v2-spot") {
		t.Fatalf("a user's cluster with the pool's name: %v", err)
	}
	if c := h.findCompute("sls-ds1v2-spot"); c.Serverless {
		t.Fatal("the user's cluster became serverless")
	}
}

// Concurrent first submits create one pool, and every job lands on it.
func TestServerlessConcurrentSubmitsCreateOnePool(t *testing.T) {
	h := newHarness(t, "")
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = h.svc.SubmitJob(h.ctx, ws, serverlessJob("j"+string(rune('a'+i)), nil, ""))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("submit %d: %v", i, err)
		}
	}
	list, err := h.svc.ListComputes(h.ctx, compute.ComputeFilter{Workspace: ws, IncludeServerless: true})
	if err != nil || len(list) != 1 || list[0].Name != "sls-ds1v2-std" {
		t.Fatalf("pools after concurrent submits: %d, %v", len(list), err)
	}
	if c := h.countEvents("sls-ds1v2-std", "serverless pool for"); c != 1 {
		t.Fatalf("%d creation events, want 1", c)
	}
	jobs, err := h.svc.ListJobs(h.ctx, job.JobFilter{Workspace: ws, Compute: "sls-ds1v2-std"})
	if err != nil || len(jobs) != n {
		t.Fatalf("%d jobs on the pool, want %d (%v)", len(jobs), n, err)
	}
}
