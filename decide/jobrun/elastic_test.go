package jobrun_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/jobrun"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// A parallel job's rank other than 0 lost or preempted ends alone: the
// attempt runs on with the other ranks (no wake, no requeue) and
// completes when rank 0 does; rank 0 lost ends the attempt and requeues
// the job as for any job; a command job's rank 1 lost still does.
func TestParallelRanksAreElastic(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	parallelJob := func() (*job.Job, *job.Attempt) {
		j, a := fixture(job.JobRunning, job.AttemptRunning, "n0", "n1", "n2")
		j.Parallel = &job.ParallelSpec{InputData: "${{inputs.data}}"}
		return j, a
	}
	step := func(j *job.Job, a *job.Attempt, ev jobrun.Event) jobrun.Output {
		t.Helper()
		out, err := jobrun.Step(j, a, ev, now)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	j, a := parallelJob()
	out := step(j, a, jobrun.Event{Kind: jobrun.NodeLost, Rank: 1, Reason: "missed its lease"})
	if out.Ended || out.Attempt.Status != job.AttemptRunning || len(out.Wake) != 0 || out.Attempt.Ranks[1].Status != job.AttemptLost {
		t.Fatalf("rank 1 lost: ended %v, attempt %s, wake %v, rank %s", out.Ended, out.Attempt.Status, out.Wake, out.Attempt.Ranks[1].Status)
	}
	if len(out.Events) != 1 || out.Events[0].Code != jobrun.CodeRankLeft || out.Events[0].Reason != "rank 1 on node n1 was lost: the other ranks take over its mini-batches" {
		t.Errorf("rank 1 lost: events %+v", out.Events)
	}
	j, a = &out.Job, out.Attempt
	out = step(j, a, report(2, node.RankPreempted, nil))
	if out.Ended || out.Attempt.Status != job.AttemptRunning || len(out.Wake) != 0 || !out.FreeNode {
		t.Fatalf("rank 2 preempted: ended %v, attempt %s, wake %v, free %v", out.Ended, out.Attempt.Status, out.Wake, out.FreeNode)
	}
	if len(out.Events) != 1 || out.Events[0].Code != jobrun.CodeRankLeft || !strings.Contains(out.Events[0].Reason, "rank 2 on node n2 was preempted") {
		t.Errorf("rank 2 preempted: events %+v", out.Events)
	}
	j, a = &out.Job, out.Attempt
	out = step(j, a, report(0, node.RankCompleted, ip(0)))
	if !out.Ended || out.Attempt.Status != job.AttemptCompleted || out.Job.Status != job.JobCompleted || out.Requeued {
		t.Fatalf("rank 0 done after 1 and 2 were lost: attempt %s, job %s, requeued %v", out.Attempt.Status, out.Job.Status, out.Requeued)
	}

	j, a = parallelJob()
	out = step(j, a, jobrun.Event{Kind: jobrun.NodeLost, Rank: 0, Reason: "missed its lease"})
	if out.Attempt.Status != job.AttemptLost || len(out.Wake) != 2 {
		t.Fatalf("rank 0 lost: attempt %s, wake %v", out.Attempt.Status, out.Wake)
	}
	j, a = &out.Job, out.Attempt
	out = step(j, a, report(1, node.RankCanceled, nil))
	out = step(&out.Job, out.Attempt, report(2, node.RankCanceled, nil))
	if !out.Ended || !out.Requeued || out.Job.Status != job.JobQueued || out.RetrySpent {
		t.Fatalf("after rank 0 was lost: job %s, requeued %v, retry spent %v", out.Job.Status, out.Requeued, out.RetrySpent)
	}

	j, a = fixture(job.JobRunning, job.AttemptRunning, "n0", "n1")
	out = step(j, a, jobrun.Event{Kind: jobrun.NodeLost, Rank: 1, Reason: "gone"})
	if out.Attempt.Status != job.AttemptLost || len(out.Wake) != 1 {
		t.Fatalf("a command job's rank 1 lost: attempt %s, wake %v", out.Attempt.Status, out.Wake)
	}
}
