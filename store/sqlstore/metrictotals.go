package sqlstore

import (
	"fmt"

	"github.com/shoal-ml/shoal/domain/mlflowrun"
)

// A run's running totals (migration 0030): one row per metric key with
// its point count, extremes and last point, kept by AppendMetrics in the
// same transaction as the points. What reads a run's metrics at a glance
// (the limits a log-batch checks, GetRun, `job show --metrics`) reads
// these at most MaxRunMetricKeys rows instead of every point: summing a
// run of 183,000 points took 0.5 s inside the single writer's
// transaction, and every other user's write waited behind it.

// metricTotal is one key's share of a batch, in the order it came.
type metricTotal struct {
	key                string
	points             int
	min, max, last     float64
	lastStep, lastTime int64
}

// batchTotals sums points per key, keys in the order they first came.
// The last point of a key is its highest step, then latest timestamp,
// then the last logged: the order ListMetricHistory reads them in.
func batchTotals(points []mlflowrun.MetricPoint) []*metricTotal {
	var out []*metricTotal
	byKey := map[string]*metricTotal{}
	for _, p := range points {
		m := byKey[p.Key]
		if m == nil {
			m = &metricTotal{key: p.Key, min: p.Value, max: p.Value, last: p.Value, lastStep: p.Step, lastTime: p.Timestamp}
			byKey[p.Key] = m
			out = append(out, m)
		}
		m.points++
		m.min, m.max = min(m.min, p.Value), max(m.max, p.Value)
		if p.Step > m.lastStep || (p.Step == m.lastStep && p.Timestamp >= m.lastTime) {
			m.last, m.lastStep, m.lastTime = p.Value, p.Step, p.Timestamp
		}
	}
	return out
}

// queryAddMetricTotal adds a key's share of a batch to its totals. The
// SET expressions read the row as it was, so the batch's last point
// replaces the stored one when it comes at least as late (a tie goes to
// the later logged, as ListMetricHistory orders them).
const queryAddMetricTotal = `INSERT INTO run_metric_totals
		(workspace_key, job, key, points, min_value, max_value, last_value, last_step, last_timestamp)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
	ON CONFLICT (workspace_key, job, key) DO UPDATE SET
		points = run_metric_totals.points + excluded.points,
		min_value = CASE WHEN excluded.min_value < run_metric_totals.min_value THEN excluded.min_value ELSE run_metric_totals.min_value END,
		max_value = CASE WHEN excluded.max_value > run_metric_totals.max_value THEN excluded.max_value ELSE run_metric_totals.max_value END,
		last_value = CASE WHEN ` + laterPoint + ` THEN excluded.last_value ELSE run_metric_totals.last_value END,
		last_timestamp = CASE WHEN ` + laterPoint + ` THEN excluded.last_timestamp ELSE run_metric_totals.last_timestamp END,
		last_step = CASE WHEN ` + laterPoint + ` THEN excluded.last_step ELSE run_metric_totals.last_step END`

// laterPoint: the batch's last point comes at least as late as the
// stored one.
const laterPoint = `(excluded.last_step > run_metric_totals.last_step OR
		(excluded.last_step = run_metric_totals.last_step AND excluded.last_timestamp >= run_metric_totals.last_timestamp))`

// addMetricTotals adds a batch of points to its run's totals.
func (t *tx) addMetricTotals(workspace, job string, points []mlflowrun.MetricPoint) error {
	for _, m := range batchTotals(points) {
		if _, err := t.exec(queryAddMetricTotal, key(workspace), job, m.key, m.points, m.min, m.max, m.last, m.lastStep, m.lastTime); err != nil {
			return fmt.Errorf("store: metric totals of %s in %s/%s: %w", m.key, workspace, job, err)
		}
	}
	return nil
}

// querySummarizeMetrics reads a run's totals, ordered by key.
const querySummarizeMetrics = `SELECT key, points, min_value, max_value, last_value, last_step, last_timestamp
	FROM run_metric_totals WHERE workspace_key = $1 AND job = $2 ORDER BY key`

// SummarizeMetrics returns each metric of a job's run, ordered by key,
// from its running totals.
func (t *tx) SummarizeMetrics(workspace, job string) ([]mlflowrun.MetricSummary, error) {
	rows, err := t.query(querySummarizeMetrics, key(workspace), job)
	if err != nil {
		return nil, fmt.Errorf("store: metrics of %s/%s: %w", workspace, job, err)
	}
	ms, err := collect(rows, func(sc scanner) (*mlflowrun.MetricSummary, error) {
		var m mlflowrun.MetricSummary
		return &m, sc.Scan(&m.Key, &m.Points, &m.Min, &m.Max, &m.Last, &m.Step, &m.Time)
	})
	if err != nil {
		return nil, fmt.Errorf("store: metrics of %s/%s: %w", workspace, job, err)
	}
	out := make([]mlflowrun.MetricSummary, len(ms))
	for i, m := range ms {
		out[i] = *m
	}
	return out, nil
}
