package sweeps

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/store"
)

// Attack: a job made beforehand under a trial's name (sw-trial-1), not
// the sweep's child, logging a metric better than any trial's, is never
// read as that trial: the trial fails saying so, and the sweep's best
// trial (whose outputs a pipeline's sweep step passes on) is one of its
// own.
func TestImpostorTrialIsNotTheSweeps(t *testing.T) {
	b := newBench(t)
	impostor := &job.JobSpec{Name: job.SweepChildName("sw", 1), Command: "echo mine", Compute: "cpu"}
	if _, _, err := b.svc.SubmitJob(b.ctx, "ws", impostor); err != nil {
		t.Fatal(err)
	}
	b.submit("sw", "")
	l := New(b.svc)
	finish := func(name string, acc float64) {
		t.Helper()
		if err := b.db.Update(b.ctx, func(tx store.Tx) error {
			j, err := tx.GetJob("ws", name)
			if err != nil {
				return err
			}
			j.Status = job.JobCompleted
			j.Version++
			if err := tx.UpdateJob(j); err != nil {
				return err
			}
			return tx.AppendMetrics("ws", name, []mlflowrun.MetricPoint{{Key: "acc", Value: acc, Timestamp: 1}})
		}); err != nil {
			t.Fatal(err)
		}
	}
	finish(impostor.Name, 0.99)
	for i := 0; i < 6; i++ {
		if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
			t.Fatal(err)
		}
		for _, tr := range b.job("sw").Trials {
			if tr.Job != impostor.Name && tr.Status == job.JobQueued {
				finish(tr.Job, 0.5+float64(tr.Index)/100)
			}
		}
	}
	sw := b.job("sw")
	if sw.Status != job.JobCompleted || sw.BestChildRunID == "" || sw.BestChildRunID == impostor.Name {
		t.Fatalf("sweep %s, best %q: want completed with one of its own trials", sw.Status, sw.BestChildRunID)
	}
	for _, tr := range sw.Trials {
		if tr.Job == impostor.Name && (tr.Status != job.JobFailed || tr.Metric != nil || !strings.Contains(tr.Reason, "not a child of sw")) {
			t.Errorf("trial 1: %+v, want failed, without the impostor's metric", tr)
		}
	}
}
