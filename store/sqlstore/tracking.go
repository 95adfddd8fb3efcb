package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// What a job's run logs through the MLflow tracking API (migration
// 0024): one row per metric point, parameter and tag, keyed by the
// lower-cased workspace and the job's name; and the experiments.

// AppendMetrics adds points to a job's run, and to its running totals
// (metrictotals.go).
func (t *tx) AppendMetrics(workspace, job string, points []mlflowrun.MetricPoint) error {
	if err := t.writable("append metrics"); err != nil {
		return err
	}
	for _, p := range points {
		if _, err := t.exec(`INSERT INTO run_metrics (workspace_key, job, key, value, timestamp, step) VALUES ($1, $2, $3, $4, $5, $6)`,
			key(workspace), job, p.Key, p.Value, p.Timestamp, p.Step); err != nil {
			return fmt.Errorf("store: append metric %s of %s/%s: %w", p.Key, workspace, job, err)
		}
	}
	return t.addMetricTotals(workspace, job, points)
}

// ListMetricHistory returns a job's points of one metric in step order.
func (t *tx) ListMetricHistory(workspace, job, metric string) ([]mlflowrun.MetricPoint, error) {
	rows, err := t.query(`SELECT key, value, timestamp, step FROM run_metrics
		WHERE workspace_key = $1 AND job = $2 AND key = $3 ORDER BY step, timestamp, id`, key(workspace), job, metric)
	if err != nil {
		return nil, fmt.Errorf("store: metric %s of %s/%s: %w", metric, workspace, job, err)
	}
	ps, err := collect(rows, func(sc scanner) (*mlflowrun.MetricPoint, error) {
		var p mlflowrun.MetricPoint
		return &p, sc.Scan(&p.Key, &p.Value, &p.Timestamp, &p.Step)
	})
	if err != nil {
		return nil, fmt.Errorf("store: metric %s of %s/%s: %w", metric, workspace, job, err)
	}
	out := make([]mlflowrun.MetricPoint, len(ps))
	for i, p := range ps {
		out[i] = *p
	}
	return out, nil
}

// InsertRunParam sets a parameter. Returns ECONFLICT when it is set.
func (t *tx) InsertRunParam(workspace, job string, p mlflowrun.RunParam) error {
	if err := t.writable("insert run param"); err != nil {
		return err
	}
	res, err := t.exec(`INSERT INTO run_params (workspace_key, job, key, value) VALUES ($1, $2, $3, $4)
		ON CONFLICT (workspace_key, job, key) DO NOTHING`, key(workspace), job, p.Key, p.Value)
	if err != nil {
		return fmt.Errorf("store: param %s of %s/%s: %w", p.Key, workspace, job, err)
	}
	if n, err := affected(res); err != nil {
		return fmt.Errorf("store: param %s of %s/%s: %w", p.Key, workspace, job, err)
	} else if n == 0 {
		return core.Errorf(core.ECONFLICT, "parameter %s of job %s is already set", p.Key, job)
	}
	return nil
}

// ListRunParams returns a run's parameters ordered by key.
func (t *tx) ListRunParams(workspace, job string) ([]mlflowrun.RunParam, error) {
	kv, err := t.listKV("run_params", workspace, job)
	out := make([]mlflowrun.RunParam, len(kv))
	for i, p := range kv {
		out[i] = mlflowrun.RunParam(p)
	}
	return out, err
}

// PutRunTag sets a tag, replacing one of the same key.
func (t *tx) PutRunTag(workspace, job string, tag mlflowrun.RunTag) error {
	if err := t.writable("put run tag"); err != nil {
		return err
	}
	if _, err := t.exec(`INSERT INTO run_tags (workspace_key, job, key, value) VALUES ($1, $2, $3, $4)
		ON CONFLICT (workspace_key, job, key) DO UPDATE SET value = excluded.value`, key(workspace), job, tag.Key, tag.Value); err != nil {
		return fmt.Errorf("store: tag %s of %s/%s: %w", tag.Key, workspace, job, err)
	}
	return nil
}

// ListRunTags returns a run's tags ordered by key.
func (t *tx) ListRunTags(workspace, job string) ([]mlflowrun.RunTag, error) {
	kv, err := t.listKV("run_tags", workspace, job)
	out := make([]mlflowrun.RunTag, len(kv))
	for i, p := range kv {
		out[i] = mlflowrun.RunTag(p)
	}
	return out, err
}

// listKV reads the key/value rows of a run from table (a constant).
func (t *tx) listKV(table, workspace, job string) ([]mlflowrun.RunParam, error) {
	rows, err := t.query(`SELECT key, value FROM `+table+` WHERE workspace_key = $1 AND job = $2 ORDER BY key`, key(workspace), job)
	if err != nil {
		return nil, fmt.Errorf("store: %s of %s/%s: %w", table, workspace, job, err)
	}
	ps, err := collect(rows, func(sc scanner) (*mlflowrun.RunParam, error) {
		var p mlflowrun.RunParam
		return &p, sc.Scan(&p.Key, &p.Value)
	})
	if err != nil {
		return nil, fmt.Errorf("store: %s of %s/%s: %w", table, workspace, job, err)
	}
	out := make([]mlflowrun.RunParam, len(ps))
	for i, p := range ps {
		out[i] = *p
	}
	return out, nil
}

// DeleteRunData removes what a job's run logged.
func (t *tx) DeleteRunData(workspace, job string) error {
	if err := t.writable("delete run data"); err != nil {
		return err
	}
	for _, table := range []string{"run_metrics", "run_metric_totals", "run_params", "run_tags"} {
		if _, err := t.exec(`DELETE FROM `+table+` WHERE workspace_key = $1 AND job = $2`, key(workspace), job); err != nil {
			return fmt.Errorf("store: delete %s of %s/%s: %w", table, workspace, job, err)
		}
	}
	return nil
}

// InsertExperiment records an experiment. Returns ECONFLICT.
func (t *tx) InsertExperiment(e *mlflowrun.Experiment) error {
	if err := t.writable("insert experiment"); err != nil {
		return err
	}
	if e.CreatedOn.IsZero() {
		e.CreatedOn = t.now
	}
	normTime(&e.CreatedOn)
	res, err := t.exec(`INSERT INTO experiments (workspace_key, name_key, workspace, name, created_on) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (workspace_key, name_key) DO NOTHING`, key(e.Workspace), key(e.Name), e.Workspace, e.Name, sqlq.Micros(e.CreatedOn))
	if err != nil {
		return fmt.Errorf("store: insert experiment %s in %s: %w", e.Name, e.Workspace, err)
	}
	if n, err := affected(res); err != nil {
		return fmt.Errorf("store: insert experiment %s in %s: %w", e.Name, e.Workspace, err)
	} else if n == 0 {
		return core.Errorf(core.ECONFLICT, "experiment %s already exists in workspace %s", e.Name, e.Workspace)
	}
	return nil
}

func scanExperiment(sc scanner) (*mlflowrun.Experiment, error) {
	var (
		e  mlflowrun.Experiment
		at int64
	)
	if err := sc.Scan(&e.Workspace, &e.Name, &at); err != nil {
		return nil, err
	}
	e.CreatedOn = sqlq.FromMicros(at)
	return &e, nil
}

// GetExperiment returns an experiment by name. Returns ENOTFOUND.
func (t *tx) GetExperiment(workspace, name string) (*mlflowrun.Experiment, error) {
	e, err := scanExperiment(t.queryRow(`SELECT workspace, name, created_on FROM experiments WHERE workspace_key = $1 AND name_key = $2`,
		key(workspace), key(name)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "experiment %s is not in workspace %s", name, workspace)
	} else if err != nil {
		return nil, fmt.Errorf("store: get experiment %s in %s: %w", name, workspace, err)
	}
	return e, nil
}

// ListExperiments returns a workspace's experiments ordered by name.
func (t *tx) ListExperiments(workspace string) ([]*mlflowrun.Experiment, error) {
	rows, err := t.query(`SELECT workspace, name, created_on FROM experiments WHERE workspace_key = $1 ORDER BY name_key`, key(workspace))
	if err != nil {
		return nil, fmt.Errorf("store: list experiments of %s: %w", workspace, err)
	}
	out, err := collect(rows, scanExperiment)
	if err != nil {
		return nil, fmt.Errorf("store: list experiments of %s: %w", workspace, err)
	}
	return out, nil
}
