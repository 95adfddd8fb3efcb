package service_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// A rank whose preparation failed because the server or the machine did
// (the agent reports it Lost) requeues the job without spending a retry,
// and the attempt says why.
func TestPreparationLostIsInfra(t *testing.T) {
	h := newHarness(t, "")
	n, task := h.placeOne("j")
	if _, err := h.svc.ReportRank(h.ctx, n, task.AttemptID, task.Rank, &node.RankReport{State: node.RankLost, Failure: node.RankPrepareFailed, Reason: "preparing failed: fetch the code: connection refused"}); err != nil {
		t.Fatal(err)
	}
	j := h.job("j")
	// Requeued (and at once placed again on the node, now free).
	if (j.Status != job.JobQueued && j.Status != job.JobPreparing) || j.FailedAttempts != 0 || j.InfraRequeues != 1 {
		t.Fatalf("job %s, %d failed attempts, %d infra requeues; want it requeued with 0 and 1", j.Status, j.FailedAttempts, j.InfraRequeues)
	}
	a := h.attempts("j")[0]
	if a.Status != job.AttemptLost || !strings.Contains(a.Reason, "could not be prepared") || !strings.Contains(a.Reason, "connection refused") {
		t.Errorf("attempt %s: %q", a.Status, a.Reason)
	}
}
