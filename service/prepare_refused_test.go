package service_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// A rank whose archive was refused for safety (the agent reports it
// Failed, with the archive's reason) fails the job at once with that
// reason: no requeue, no other node tried.
func TestPreparationRefusedArchiveFailsTheJob(t *testing.T) {
	h := newHarness(t, "")
	n, task := h.placeOne("j")
	minusOne := -1 // as the agent reports a rank that never ran
	reason := `preparing failed: code: archive: entry "../../escape.txt": path escapes the destination: unsafe archive entry`
	if _, err := h.svc.ReportRank(h.ctx, n, task.AttemptID, task.Rank, &node.RankReport{State: node.RankFailed, Failure: node.RankPrepareFailed, Reason: reason, ExitCode: &minusOne}); err != nil {
		t.Fatal(err)
	}
	h.step(0)
	j := h.job("j")
	if j.Status != job.JobFailed || j.InfraRequeues != 0 || len(h.attempts("j")) != 1 {
		t.Fatalf("job %s, %d infra requeues, %d attempts; want Failed at once", j.Status, j.InfraRequeues, len(h.attempts("j")))
	}
	if !strings.Contains(j.Error+j.StatusReason+h.attempts("j")[0].Reason, "unsafe archive entry") {
		t.Errorf("the job does not say why: error %q, reason %q, attempt %q", j.Error, j.StatusReason, h.attempts("j")[0].Reason)
	}
}

// The server reads why a rank never ran from the report's Failure code,
// not from its text: a start failure whose reason says nothing of
// "start failed" still becomes the job's error, instead of the -1 the
// agent reports as an exit code.
func TestRankFailureIsReadByCode(t *testing.T) {
	h := newHarness(t, "")
	n, task := h.placeOne("j")
	minusOne := -1
	reason := `exec: "python": executable file not found in $PATH`
	if _, err := h.svc.ReportRank(h.ctx, n, task.AttemptID, task.Rank, &node.RankReport{State: node.RankFailed, Failure: node.RankStartFailed, Reason: reason, ExitCode: &minusOne}); err != nil {
		t.Fatal(err)
	}
	j := h.job("j")
	if j.Status != job.JobFailed || !strings.Contains(j.Error, "executable file not found") || strings.Contains(j.Error, "exit code") {
		t.Errorf("job %s, error %q: want Failed with the start failure's reason", j.Status, j.Error)
	}
	if a := h.attempts("j")[0]; a.Ranks[0].Failure != node.RankStartFailed {
		t.Errorf("rank 0 kept failure %q, want %q", a.Ranks[0].Failure, node.RankStartFailed)
	}
}
