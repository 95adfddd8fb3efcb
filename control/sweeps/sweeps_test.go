package sweeps

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/filestore"
)

func TestIntervalValues(t *testing.T) {
	pts := func(steps []int64, values []float64) []mlflowrun.MetricPoint {
		out := make([]mlflowrun.MetricPoint, len(steps))
		for i := range steps {
			out[i] = mlflowrun.MetricPoint{Key: "acc", Value: values[i], Step: steps[i], Timestamp: int64(i)}
		}
		return out
	}
	for _, c := range []struct {
		name   string
		points []mlflowrun.MetricPoint
		want   []float64
	}{
		{"none", nil, nil},
		{"one per step", pts([]int64{1, 2, 3}, []float64{0.5, 0.6, 0.7}), []float64{0.5, 0.6, 0.7}},
		// Step then timestamp order, as the store reads them: attempt 1
		// logged steps 1 and 2, attempt 2 (after a preemption) 1 to 3.
		{"a restarted trial's steps logged again", pts([]int64{1, 1, 2, 2, 3}, []float64{0.5, 0.51, 0.6, 0.61, 0.7}), []float64{0.51, 0.61, 0.7}},
		{"no steps: every point an interval", pts([]int64{0, 0, 0}, []float64{0.5, 0.4, 0.7}), []float64{0.5, 0.4, 0.7}},
		{"steps from 0", pts([]int64{0, 1}, []float64{0.5, 0.4}), []float64{0.5, 0.4}},
	} {
		if got := intervalValues(c.points); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A trial requeued after a preemption logs its epochs again from the
// first: bandit judges it by its epochs (not by twice as many intervals,
// which compared its step-2 value with the others' step 4 and cancelled
// a good trial in the end-to-end sweep), while a bad trial is still
// cancelled.
func TestRunOnceJudgesARestartedTrialByItsSteps(t *testing.T) {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	if err := db.Update(ctx, func(tx store.Tx) error {
		c := teststore.Cluster(tx, "cpu")
		three := 3
		c.MaxInstances = &three
		return tx.InsertCompute(c)
	}); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: "local", Provider: "fake", Quota: catalog.DefaultQuotaLimits()}}, catalog.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: db, Catalog: cat, Files: files})
	spec, err := sweepjob.DecodeSweepSpec([]byte(`{"type": "sweep", "name": "sw", "compute": "azureml:cpu",
		"trial": {"command": "python train.py --lr ${{search_space.lr}}"},
		"search_space": {"lr": {"type": "uniform", "min_value": 0.001, "max_value": 0.1}},
		"sampling_algorithm": {"type": "random", "seed": 1},
		"objective": {"primary_metric": "acc", "goal": "maximize"},
		"limits": {"max_total_trials": 3, "max_concurrent_trials": 3},
		"early_termination": {"type": "bandit", "slack_factor": 0.1, "evaluation_interval": 1, "delay_evaluation": 2}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.SubmitSweep(ctx, "ws", spec); err != nil {
		t.Fatal(err)
	}
	l := New(svc)
	if err := l.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	// The three trials run; trial 0 finished six epochs, trial 1 was
	// preempted after two and has logged four since its restart, trial 2
	// does badly.
	curve := []float64{0.5, 0.6, 0.7, 0.8, 0.9, 0.95}
	logged := map[int][][]float64{0: {curve}, 1: {curve[:2], curve[:4]}, 2: {{0.2, 0.25, 0.3, 0.35}}}
	err = db.Update(ctx, func(tx store.Tx) error {
		ts := int64(0)
		for i, attempts := range logged {
			name := job.SweepChildName("sw", i)
			j, err := tx.GetJob("ws", name)
			if err != nil {
				return err
			}
			j.Status = job.JobRunning
			j.Version++
			if err := tx.UpdateJob(j); err != nil {
				return err
			}
			for _, values := range attempts {
				for k, v := range values {
					ts++
					if err := tx.AppendMetrics("ws", name, []mlflowrun.MetricPoint{{Key: "acc", Value: v, Step: int64(k + 1), Timestamp: ts}}); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	var p *job.Job
	if err := db.View(ctx, func(tx store.Tx) (err error) { p, err = tx.GetJob("ws", "sw"); return err }); err != nil {
		t.Fatal(err)
	}
	if len(p.Trials) != 3 {
		t.Fatalf("%d trials, want 3", len(p.Trials))
	}
	for i, want := range []struct {
		intervals int
		metric    float64
		cancelled bool
	}{{6, 0.95, false}, {4, 0.8, false}, {4, 0.35, true}} {
		tr := p.Trials[i]
		if tr.Intervals != want.intervals || tr.Metric == nil || *tr.Metric != want.metric {
			t.Errorf("trial %d: %d intervals, metric %s; want %d, %v", i, tr.Intervals, metricText(tr.Metric), want.intervals, want.metric)
		}
		if (tr.EarlyTerminated != "") != want.cancelled {
			t.Errorf("trial %d: early_terminated %q (%s), want cancelled %v", i, tr.EarlyTerminated, tr.Reason, want.cancelled)
		}
	}
	if p.Trials[2].EarlyTerminated != "BanditSlack" {
		t.Errorf("trial 2: early_terminated %q, want BanditSlack", p.Trials[2].EarlyTerminated)
	}
}

func metricText(m *float64) string {
	if m == nil {
		return "none"
	}
	return strconv.FormatFloat(*m, 'g', -1, 64)
}
