package assettest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// testRunTracking covers what a job's run logs: points append and read
// back per metric in step order (ties by timestamp, then by the order they
// came in), the summary's last point, extremes and count; runs are apart
// per job and per workspace (compared case-insensitively, job names
// exactly); a parameter is set once (ECONFLICT after); a tag is replaced;
// DeleteRunData removes one job's data and no other's.
func testRunTracking(t *testing.T, s store.Store, _ *stcheck.Clock) {
	history := func(ws, job, key string) []mlflowrun.MetricPoint {
		t.Helper()
		var out []mlflowrun.MetricPoint
		if err := s.View(t.Context(), func(tx store.Tx) (err error) {
			out, err = tx.ListMetricHistory(ws, job, key)
			return err
		}); err != nil {
			t.Fatalf("ListMetricHistory: %v", err)
		}
		return out
	}
	summary := func(ws, job string) []mlflowrun.MetricSummary {
		t.Helper()
		var out []mlflowrun.MetricSummary
		if err := s.View(t.Context(), func(tx store.Tx) (err error) {
			out, err = tx.SummarizeMetrics(ws, job)
			return err
		}); err != nil {
			t.Fatalf("SummarizeMetrics: %v", err)
		}
		return out
	}
	if got := history("ws", "j1", "loss"); len(got) != 0 {
		t.Errorf("history of a run without points: %s", stcheck.Show(got))
	}
	if got := summary("ws", "j1"); len(got) != 0 {
		t.Errorf("summary of a run without points: %s", stcheck.Show(got))
	}
	p := func(key string, v float64, ts, step int64) mlflowrun.MetricPoint {
		return mlflowrun.MetricPoint{Key: key, Value: v, Timestamp: ts, Step: step}
	}
	stcheck.Update(t, s, func(tx store.Tx) error {
		return tx.AppendMetrics("WS", "j1", []mlflowrun.MetricPoint{
			p("loss", 0.9, 1000, 0), p("loss", 0.5, 3000, 2), p("acc", 0.1, 1000, 0),
			p("loss", 0.7, 2000, 1), p("loss", 0.6, 2000, 1), // same step and time: kept in order
		})
	})
	stcheck.Update(t, s, func(tx store.Tx) error {
		return tx.AppendMetrics("ws", "J1", []mlflowrun.MetricPoint{p("loss", 42, 1, 0)}) // another job
	})
	stcheck.Update(t, s, func(tx store.Tx) error {
		return tx.AppendMetrics("other", "j1", []mlflowrun.MetricPoint{p("loss", 7, 1, 0)}) // another workspace
	})
	stcheck.Equal(t, "history of ws/j1 loss", history("ws", "j1", "loss"), []mlflowrun.MetricPoint{
		p("loss", 0.9, 1000, 0), p("loss", 0.7, 2000, 1), p("loss", 0.6, 2000, 1), p("loss", 0.5, 3000, 2)})
	stcheck.Equal(t, "history of ws/j1 acc", history("Ws", "j1", "acc"), []mlflowrun.MetricPoint{p("acc", 0.1, 1000, 0)})
	stcheck.Equal(t, "history of ws/j1 LOSS (keys compare exactly)", len(history("ws", "j1", "LOSS")), 0)
	stcheck.Equal(t, "summary of ws/j1", summary("ws", "j1"), []mlflowrun.MetricSummary{
		{Key: "acc", Last: 0.1, Step: 0, Time: 1000, Min: 0.1, Max: 0.1, Points: 1},
		{Key: "loss", Last: 0.5, Step: 2, Time: 3000, Min: 0.5, Max: 0.9, Points: 4},
	})
	// A later point at a lower step is not the last one: the step orders.
	stcheck.Update(t, s, func(tx store.Tx) error {
		return tx.AppendMetrics("ws", "j1", []mlflowrun.MetricPoint{p("loss", 0.1, 9000, 1)})
	})
	if got := summary("ws", "j1"); len(got) != 2 || got[1].Last != 0.5 || got[1].Min != 0.1 || got[1].Points != 5 {
		t.Errorf("summary after a late point at step 1: %s", stcheck.Show(got))
	}

	params := func(ws, job string) []mlflowrun.RunParam {
		t.Helper()
		var out []mlflowrun.RunParam
		if err := s.View(t.Context(), func(tx store.Tx) (err error) {
			out, err = tx.ListRunParams(ws, job)
			return err
		}); err != nil {
			t.Fatalf("ListRunParams: %v", err)
		}
		return out
	}
	tags := func(ws, job string) []mlflowrun.RunTag {
		t.Helper()
		var out []mlflowrun.RunTag
		if err := s.View(t.Context(), func(tx store.Tx) (err error) {
			out, err = tx.ListRunTags(ws, job)
			return err
		}); err != nil {
			t.Fatalf("ListRunTags: %v", err)
		}
		return out
	}
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, kv := range []mlflowrun.RunParam{{Key: "lr", Value: "0.01"}, {Key: "epochs", Value: "3"}} {
			if err := tx.InsertRunParam("ws", "j1", kv); err != nil {
				return err
			}
		}
		return tx.InsertRunParam("ws", "J1", mlflowrun.RunParam{Key: "lr", Value: "9"})
	})
	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertRunParam("WS", "j1", mlflowrun.RunParam{Key: "lr", Value: "0.02"})
	})
	stcheck.WantCode(t, "InsertRunParam of a key already set", err, core.ECONFLICT)
	stcheck.Equal(t, "params of ws/j1", params("ws", "j1"), []mlflowrun.RunParam{{Key: "epochs", Value: "3"}, {Key: "lr", Value: "0.01"}})

	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.PutRunTag("ws", "j1", mlflowrun.RunTag{Key: "stage", Value: "a"}); err != nil {
			return err
		}
		if err := tx.PutRunTag("ws", "j1", mlflowrun.RunTag{Key: "mlflow.runName", Value: "first"}); err != nil {
			return err
		}
		return tx.PutRunTag("WS", "j1", mlflowrun.RunTag{Key: "stage", Value: "b"})
	})
	stcheck.Equal(t, "tags of ws/j1", tags("ws", "j1"), []mlflowrun.RunTag{{Key: "mlflow.runName", Value: "first"}, {Key: "stage", Value: "b"}})
	stcheck.Equal(t, "tags of ws/J1", len(tags("ws", "J1")), 0)

	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteRunData("WS", "j1") })
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteRunData("ws", "never-logged") })
	stcheck.Equal(t, "history after DeleteRunData", len(history("ws", "j1", "loss")), 0)
	stcheck.Equal(t, "summary after DeleteRunData", len(summary("ws", "j1")), 0)
	stcheck.Equal(t, "params after DeleteRunData", len(params("ws", "j1")), 0)
	stcheck.Equal(t, "tags after DeleteRunData", len(tags("ws", "j1")), 0)
	stcheck.Equal(t, "another job's history after DeleteRunData", history("ws", "J1", "loss"), []mlflowrun.MetricPoint{p("loss", 42, 1, 0)})
	stcheck.Equal(t, "another job's params after DeleteRunData", params("ws", "J1"), []mlflowrun.RunParam{{Key: "lr", Value: "9"}})
	stcheck.Equal(t, "another workspace's history after DeleteRunData", history("other", "j1", "loss"), []mlflowrun.MetricPoint{p("loss", 7, 1, 0)})
}

// testExperiments covers the experiments: inserted once per workspace
// (names compared case-insensitively, ECONFLICT after), read by name in
// any case with the name as first written, listed per workspace by name.
func testExperiments(t *testing.T, s store.Store, clock *stcheck.Clock) {
	get := func(ws, name string) (*mlflowrun.Experiment, error) {
		var e *mlflowrun.Experiment
		err := s.View(t.Context(), func(tx store.Tx) (err error) {
			e, err = tx.GetExperiment(ws, name)
			return err
		})
		return e, err
	}
	_, err := get("ws", "Default")
	stcheck.WantCode(t, "GetExperiment of none", err, core.ENOTFOUND)
	a := &mlflowrun.Experiment{Workspace: "WS", Name: "Default"}
	b := &mlflowrun.Experiment{Workspace: "ws", Name: "mnist"}
	c := &mlflowrun.Experiment{Workspace: "other", Name: "Default"}
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, e := range []*mlflowrun.Experiment{b, a, c} {
			if err := tx.InsertExperiment(e); err != nil {
				return err
			}
		}
		return nil
	})
	if !a.CreatedOn.Equal(clock.Now().Truncate(time.Microsecond)) {
		t.Errorf("CreatedOn = %v, want the transaction's time %v", a.CreatedOn, clock.Now())
	}
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertExperiment(&mlflowrun.Experiment{Workspace: "ws", Name: "DEFAULT"})
	})
	stcheck.WantCode(t, "InsertExperiment of a name taken in another case", err, core.ECONFLICT)
	got, err := get("Ws", "default")
	if err != nil {
		t.Fatalf("GetExperiment: %v", err)
	}
	stcheck.Equal(t, "experiment ws/default", got, a)
	var list []*mlflowrun.Experiment
	if err := s.View(t.Context(), func(tx store.Tx) (err error) {
		list, err = tx.ListExperiments("WS")
		return err
	}); err != nil {
		t.Fatalf("ListExperiments: %v", err)
	}
	stcheck.Equal(t, "experiments of ws", list, []*mlflowrun.Experiment{a, b})
}
