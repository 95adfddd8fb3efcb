package storetest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal"
)

// testRunTracking covers what a job's run logs: points append and read
// back per metric in step order (ties by timestamp, then by the order they
// came in), the summary's last point, extremes and count; runs are apart
// per job and per workspace (compared case-insensitively, job names
// exactly); a parameter is set once (ECONFLICT after); a tag is replaced;
// DeleteRunData removes one job's data and no other's.
func testRunTracking(t *testing.T, s shoal.Store, _ *Clock) {
	history := func(ws, job, key string) []shoal.MetricPoint {
		t.Helper()
		var out []shoal.MetricPoint
		if err := s.View(t.Context(), func(tx shoal.Tx) (err error) {
			out, err = tx.ListMetricHistory(ws, job, key)
			return err
		}); err != nil {
			t.Fatalf("ListMetricHistory: %v", err)
		}
		return out
	}
	summary := func(ws, job string) []shoal.MetricSummary {
		t.Helper()
		var out []shoal.MetricSummary
		if err := s.View(t.Context(), func(tx shoal.Tx) (err error) {
			out, err = tx.SummarizeMetrics(ws, job)
			return err
		}); err != nil {
			t.Fatalf("SummarizeMetrics: %v", err)
		}
		return out
	}
	if got := history("ws", "j1", "loss"); len(got) != 0 {
		t.Errorf("history of a run without points: %s", show(got))
	}
	if got := summary("ws", "j1"); len(got) != 0 {
		t.Errorf("summary of a run without points: %s", show(got))
	}
	p := func(key string, v float64, ts, step int64) shoal.MetricPoint {
		return shoal.MetricPoint{Key: key, Value: v, Timestamp: ts, Step: step}
	}
	update(t, s, func(tx shoal.Tx) error {
		return tx.AppendMetrics("WS", "j1", []shoal.MetricPoint{
			p("loss", 0.9, 1000, 0), p("loss", 0.5, 3000, 2), p("acc", 0.1, 1000, 0),
			p("loss", 0.7, 2000, 1), p("loss", 0.6, 2000, 1), // same step and time: kept in order
		})
	})
	update(t, s, func(tx shoal.Tx) error {
		return tx.AppendMetrics("ws", "J1", []shoal.MetricPoint{p("loss", 42, 1, 0)}) // another job
	})
	update(t, s, func(tx shoal.Tx) error {
		return tx.AppendMetrics("other", "j1", []shoal.MetricPoint{p("loss", 7, 1, 0)}) // another workspace
	})
	equal(t, "history of ws/j1 loss", history("ws", "j1", "loss"), []shoal.MetricPoint{
		p("loss", 0.9, 1000, 0), p("loss", 0.7, 2000, 1), p("loss", 0.6, 2000, 1), p("loss", 0.5, 3000, 2)})
	equal(t, "history of ws/j1 acc", history("Ws", "j1", "acc"), []shoal.MetricPoint{p("acc", 0.1, 1000, 0)})
	equal(t, "history of ws/j1 LOSS (keys compare exactly)", len(history("ws", "j1", "LOSS")), 0)
	equal(t, "summary of ws/j1", summary("ws", "j1"), []shoal.MetricSummary{
		{Key: "acc", Last: 0.1, Step: 0, Time: 1000, Min: 0.1, Max: 0.1, Points: 1},
		{Key: "loss", Last: 0.5, Step: 2, Time: 3000, Min: 0.5, Max: 0.9, Points: 4},
	})
	// A later point at a lower step is not the last one: the step orders.
	update(t, s, func(tx shoal.Tx) error {
		return tx.AppendMetrics("ws", "j1", []shoal.MetricPoint{p("loss", 0.1, 9000, 1)})
	})
	if got := summary("ws", "j1"); len(got) != 2 || got[1].Last != 0.5 || got[1].Min != 0.1 || got[1].Points != 5 {
		t.Errorf("summary after a late point at step 1: %s", show(got))
	}

	params := func(ws, job string) []shoal.RunParam {
		t.Helper()
		var out []shoal.RunParam
		if err := s.View(t.Context(), func(tx shoal.Tx) (err error) {
			out, err = tx.ListRunParams(ws, job)
			return err
		}); err != nil {
			t.Fatalf("ListRunParams: %v", err)
		}
		return out
	}
	tags := func(ws, job string) []shoal.RunTag {
		t.Helper()
		var out []shoal.RunTag
		if err := s.View(t.Context(), func(tx shoal.Tx) (err error) {
			out, err = tx.ListRunTags(ws, job)
			return err
		}); err != nil {
			t.Fatalf("ListRunTags: %v", err)
		}
		return out
	}
	update(t, s, func(tx shoal.Tx) error {
		for _, kv := range []shoal.RunParam{{Key: "lr", Value: "0.01"}, {Key: "epochs", Value: "3"}} {
			if err := tx.InsertRunParam("ws", "j1", kv); err != nil {
				return err
			}
		}
		return tx.InsertRunParam("ws", "J1", shoal.RunParam{Key: "lr", Value: "9"})
	})
	err := s.Update(t.Context(), func(tx shoal.Tx) error {
		return tx.InsertRunParam("WS", "j1", shoal.RunParam{Key: "lr", Value: "0.02"})
	})
	wantCode(t, "InsertRunParam of a key already set", err, shoal.ECONFLICT)
	equal(t, "params of ws/j1", params("ws", "j1"), []shoal.RunParam{{Key: "epochs", Value: "3"}, {Key: "lr", Value: "0.01"}})

	update(t, s, func(tx shoal.Tx) error {
		if err := tx.PutRunTag("ws", "j1", shoal.RunTag{Key: "stage", Value: "a"}); err != nil {
			return err
		}
		if err := tx.PutRunTag("ws", "j1", shoal.RunTag{Key: "mlflow.runName", Value: "first"}); err != nil {
			return err
		}
		return tx.PutRunTag("WS", "j1", shoal.RunTag{Key: "stage", Value: "b"})
	})
	equal(t, "tags of ws/j1", tags("ws", "j1"), []shoal.RunTag{{Key: "mlflow.runName", Value: "first"}, {Key: "stage", Value: "b"}})
	equal(t, "tags of ws/J1", len(tags("ws", "J1")), 0)

	update(t, s, func(tx shoal.Tx) error { return tx.DeleteRunData("WS", "j1") })
	update(t, s, func(tx shoal.Tx) error { return tx.DeleteRunData("ws", "never-logged") })
	equal(t, "history after DeleteRunData", len(history("ws", "j1", "loss")), 0)
	equal(t, "summary after DeleteRunData", len(summary("ws", "j1")), 0)
	equal(t, "params after DeleteRunData", len(params("ws", "j1")), 0)
	equal(t, "tags after DeleteRunData", len(tags("ws", "j1")), 0)
	equal(t, "another job's history after DeleteRunData", history("ws", "J1", "loss"), []shoal.MetricPoint{p("loss", 42, 1, 0)})
	equal(t, "another job's params after DeleteRunData", params("ws", "J1"), []shoal.RunParam{{Key: "lr", Value: "9"}})
	equal(t, "another workspace's history after DeleteRunData", history("other", "j1", "loss"), []shoal.MetricPoint{p("loss", 7, 1, 0)})
}

// testExperiments covers the experiments: inserted once per workspace
// (names compared case-insensitively, ECONFLICT after), read by name in
// any case with the name as first written, listed per workspace by name.
func testExperiments(t *testing.T, s shoal.Store, clock *Clock) {
	get := func(ws, name string) (*shoal.Experiment, error) {
		var e *shoal.Experiment
		err := s.View(t.Context(), func(tx shoal.Tx) (err error) {
			e, err = tx.GetExperiment(ws, name)
			return err
		})
		return e, err
	}
	_, err := get("ws", "Default")
	wantCode(t, "GetExperiment of none", err, shoal.ENOTFOUND)
	a := &shoal.Experiment{Workspace: "WS", Name: "Default"}
	b := &shoal.Experiment{Workspace: "ws", Name: "mnist"}
	c := &shoal.Experiment{Workspace: "other", Name: "Default"}
	update(t, s, func(tx shoal.Tx) error {
		for _, e := range []*shoal.Experiment{b, a, c} {
			if err := tx.InsertExperiment(e); err != nil {
				return err
			}
		}
		return nil
	})
	if !a.CreatedOn.Equal(clock.Now().Truncate(time.Microsecond)) {
		t.Errorf("CreatedOn = %v, want the transaction's time %v", a.CreatedOn, clock.Now())
	}
	err = s.Update(t.Context(), func(tx shoal.Tx) error {
		return tx.InsertExperiment(&shoal.Experiment{Workspace: "ws", Name: "DEFAULT"})
	})
	wantCode(t, "InsertExperiment of a name taken in another case", err, shoal.ECONFLICT)
	got, err := get("Ws", "default")
	if err != nil {
		t.Fatalf("GetExperiment: %v", err)
	}
	equal(t, "experiment ws/default", got, a)
	var list []*shoal.Experiment
	if err := s.View(t.Context(), func(tx shoal.Tx) (err error) {
		list, err = tx.ListExperiments("WS")
		return err
	}); err != nil {
		t.Fatalf("ListExperiments: %v", err)
	}
	equal(t, "experiments of ws", list, []*shoal.Experiment{a, b})
}
