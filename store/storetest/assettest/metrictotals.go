package assettest

import (
	"database/sql"
	"math/rand/v2"
	"testing"

	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// summaryFromHistory is a run's summary summed the slow way, from every
// point: the reference the running totals must match.
func summaryFromHistory(t *testing.T, s store.Store, ws, job string, keys []string) []mlflowrun.MetricSummary {
	t.Helper()
	var out []mlflowrun.MetricSummary
	stcheck.View(t, s, func(tx store.Tx) error {
		for _, k := range keys {
			h, err := tx.ListMetricHistory(ws, job, k)
			if err != nil {
				return err
			}
			if len(h) == 0 {
				continue
			}
			last := h[len(h)-1] // the history's order: step, timestamp, as logged
			m := mlflowrun.MetricSummary{Key: k, Last: last.Value, Step: last.Step, Time: last.Timestamp, Min: h[0].Value, Max: h[0].Value, Points: len(h)}
			for _, p := range h {
				m.Min, m.Max = min(m.Min, p.Value), max(m.Max, p.Value)
			}
			out = append(out, m)
		}
		return nil
	})
	return out
}

// testMetricTotals: a run's summary comes from running totals kept by
// every append, and they stay what summing every point gives — counts,
// extremes, the last point by step then timestamp then the order logged
// — through many batches whose points come out of order, tie on step and
// timestamp, repeat keys within a batch and go negative; two runs keep
// apart; after DeleteRunData a run's totals start again from nothing.
func testMetricTotals(t *testing.T, s store.Store, _ *stcheck.Clock) {
	rng := rand.New(rand.NewPCG(35, 4))
	keys := []string{"acc", "loss", "lr", "zeta"}
	for range 40 {
		for _, job := range []string{"j1", "j2"} {
			var batch []mlflowrun.MetricPoint
			for range 1 + rng.IntN(30) {
				batch = append(batch, mlflowrun.MetricPoint{
					Key: keys[rng.IntN(len(keys))], Value: float64(rng.IntN(2001)-1000) / 8,
					Timestamp: int64(rng.IntN(5)), Step: int64(rng.IntN(6)),
				})
			}
			stcheck.Update(t, s, func(tx store.Tx) error { return tx.AppendMetrics("ws", job, batch) })
		}
	}
	summary := func(ws, job string) []mlflowrun.MetricSummary {
		t.Helper()
		var out []mlflowrun.MetricSummary
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			out, err = tx.SummarizeMetrics(ws, job)
			return err
		})
		return out
	}
	for _, job := range []string{"j1", "j2"} {
		stcheck.Equal(t, "running totals of "+job, summary("WS", job), summaryFromHistory(t, s, "ws", job, keys))
	}
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteRunData("ws", "j1") })
	stcheck.Equal(t, "totals after DeleteRunData", len(summary("ws", "j1")), 0)
	stcheck.Update(t, s, func(tx store.Tx) error {
		return tx.AppendMetrics("ws", "j1", []mlflowrun.MetricPoint{{Key: "loss", Value: 3, Timestamp: 0, Step: 0}})
	})
	stcheck.Equal(t, "totals of a run logged again after DeleteRunData", summary("ws", "j1"),
		[]mlflowrun.MetricSummary{{Key: "loss", Last: 3, Min: 3, Max: 3, Points: 1}})
	stcheck.Equal(t, "another run's totals after DeleteRunData", summary("ws", "j2"), summaryFromHistory(t, s, "ws", "j2", keys))
}

// legacyMetricRows are points a store at version 29 held (before the
// running totals), in the order they were logged: ties on step and
// timestamp, a late point at a lower step, two runs and a workspace
// of its own.
var legacyMetricRows = []struct {
	ws, job, key    string
	value           float64
	timestamp, step int64
}{
	{"prod", "j1", "loss", 0.9, 1000, 0}, {"prod", "j1", "loss", 0.5, 3000, 2}, {"prod", "j1", "acc", 0.1, 1000, 0},
	{"prod", "j1", "loss", 0.7, 3000, 2}, {"prod", "j1", "loss", -4, 9000, 1},
	{"prod", "j2", "loss", 42, 1, 0},
	{"other", "j1", "loss", 7, 1, 0},
}

// FillLegacyMetrics writes legacyMetricRows as a store at version 29
// held them.
func FillLegacyMetrics(raw *sql.DB) error {
	for _, r := range legacyMetricRows {
		if _, err := raw.Exec(`INSERT INTO run_metrics (workspace_key, job, key, value, timestamp, step) VALUES ($1, $2, $3, $4, $5, $6)`,
			r.ws, r.job, r.key, r.value, r.timestamp, r.step); err != nil {
			return err
		}
	}
	return nil
}

// CheckLegacyMetrics checks that the runs of legacyMetricRows read back
// their summaries once migrated, and that a point logged after adds to
// them.
func CheckLegacyMetrics(t *testing.T, s store.Store) {
	t.Helper()
	summary := func(ws, job string) []mlflowrun.MetricSummary {
		t.Helper()
		var out []mlflowrun.MetricSummary
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			out, err = tx.SummarizeMetrics(ws, job)
			return err
		})
		return out
	}
	stcheck.Equal(t, "summary of prod/j1 after the migration", summary("prod", "j1"), []mlflowrun.MetricSummary{
		{Key: "acc", Last: 0.1, Step: 0, Time: 1000, Min: 0.1, Max: 0.1, Points: 1},
		{Key: "loss", Last: 0.7, Step: 2, Time: 3000, Min: -4, Max: 0.9, Points: 4},
	})
	stcheck.Equal(t, "summary of prod/j2 after the migration", summary("prod", "j2"), []mlflowrun.MetricSummary{{Key: "loss", Last: 42, Min: 42, Max: 42, Time: 1, Points: 1}})
	stcheck.Equal(t, "summary of other/j1 after the migration", summary("other", "j1"), []mlflowrun.MetricSummary{{Key: "loss", Last: 7, Min: 7, Max: 7, Time: 1, Points: 1}})
	stcheck.Update(t, s, func(tx store.Tx) error {
		return tx.AppendMetrics("prod", "j1", []mlflowrun.MetricPoint{{Key: "loss", Value: 8, Timestamp: 3000, Step: 2}})
	})
	stcheck.Equal(t, "summary of prod/j1 after a point more", summary("prod", "j1")[1],
		mlflowrun.MetricSummary{Key: "loss", Last: 8, Step: 2, Time: 3000, Min: -4, Max: 8, Points: 5})
}
