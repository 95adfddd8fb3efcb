package service_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// A write to a workspace that does not exist is refused with the command
// that creates it: a typo in -w used to create a workspace silently.
func TestWriteToAnUnknownWorkspaceIsRefusedWithAHint(t *testing.T) {
	h := newHarness(t, "")
	minN, maxN := 0, 1
	_, _, err := h.svc.CreateOrApplyCompute(h.ctx, "defualt", &compute.ComputeSpec{Name: "c", Type: "amlcompute", Size: "Standard_DS3_v2", MinInstances: &minN, MaxInstances: &maxN}, "")
	if core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("got %v, want ENOTFOUND", err)
	}
	for _, want := range []string{`workspace "defualt" not found`, `did you mean "default"?`, "shoal workspace create -n defualt"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v does not say %s", err, want)
		}
	}
	if _, err := h.svc.FindWorkspace(h.ctx, "defualt"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("the refused write created the workspace: %v", err)
	}
}

func TestDeleteWorkspaceRefusesWhileComputesOrUnfinishedJobsRemain(t *testing.T) {
	h := newHarness(t, "")
	for _, name := range []string{"team", "empty"} {
		if _, err := h.svc.CreateWorkspace(h.ctx, &core.Workspace{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	minN, maxN := 0, 1
	if _, _, err := h.svc.CreateOrApplyCompute(h.ctx, "team", &compute.ComputeSpec{Name: "cpu", Type: "amlcompute", Size: "Standard_DS3_v2", MinInstances: &minN, MaxInstances: &maxN}, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.svc.SubmitJob(h.ctx, "team", &job.JobSpec{Name: "j1", Command: "true", Compute: "cpu"}); err != nil {
		t.Fatal(err)
	}
	err := h.svc.DeleteWorkspace(h.ctx, "team")
	if core.ErrorCode(err) != core.ECONFLICT {
		t.Fatalf("got %v, want ECONFLICT", err)
	}
	for _, want := range []string{"1 compute (cpu)", "1 unfinished job (j1)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v does not say what remains: %s", err, want)
		}
	}
	if _, err := h.svc.FindWorkspace(h.ctx, "team"); err != nil {
		t.Fatalf("a refused delete removed the workspace: %v", err)
	}

	limit := int64(1 << 20)
	if _, err := h.svc.UpdateWorkspaceLimits(h.adminCtx(), "empty", &limit, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.svc.DeleteWorkspace(h.ctx, "EMPTY"); err != nil {
		t.Fatalf("delete an empty workspace: %v", err)
	}
	if _, err := h.svc.FindWorkspace(h.ctx, "empty"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("deleted workspace still found: %v", err)
	}
	// Created again, it starts afresh: the old limits went with it.
	if _, err := h.svc.CreateWorkspace(h.ctx, &core.Workspace{Name: "empty"}); err != nil {
		t.Fatal(err)
	}
	l, err := h.svc.FindWorkspaceLimits(h.adminCtx(), "empty")
	if err != nil || l.Own.MaxLogBytes == limit {
		t.Fatalf("limits of the re-created workspace %+v, %v", l, err)
	}
	if err := h.svc.DeleteWorkspace(h.ctx, "nope"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("delete unknown: %v", err)
	}
	if err := h.svc.DeleteWorkspace(h.ctx, core.DefaultWorkspace); core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("delete default: %v", err)
	}
}
