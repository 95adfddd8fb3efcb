package tracking

import (
	"context"
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	jobkind "github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/store"
)

// RunView is a job's run as MLflow shows it: the job (its status and times
// are the run's), its experiment, each metric's last value, the
// parameters and the tags.
type RunView struct {
	Job        *jobkind.Job
	Experiment string
	Metrics    []mlflowrun.MetricSummary
	Params     []mlflowrun.RunParam
	Tags       []mlflowrun.RunTag
}

// Batch is what one log request writes to a run.
type Batch struct {
	Metrics []mlflowrun.MetricPoint
	Params  []mlflowrun.RunParam
	Tags    []mlflowrun.RunTag
}

// RunNameTag is the tag MLflow keeps a run's name in.
const RunNameTag = "mlflow.runName"

// Run statuses MLflow's runs/update accepts.
var runStatuses = map[string]bool{"RUNNING": true, "SCHEDULED": true, "FINISHED": true, "FAILED": true, "KILLED": true}

// GetRun returns the run of job runID in ws.
func (s *Service) GetRun(ctx context.Context, p *identity.Principal, ws, runID string) (*RunView, error) {
	if err := s.mayRead(ctx, p, ws, runID); err != nil {
		return nil, err
	}
	var v *RunView
	err := s.store.View(ctx, func(tx store.Tx) (err error) {
		v, err = readRun(tx, ws, runID)
		return err
	})
	return v, err
}

func readRun(tx store.Tx, ws, runID string) (*RunView, error) {
	j, err := jobRun(tx, ws, runID)
	if err != nil {
		return nil, err
	}
	v := &RunView{Job: j, Experiment: ExperimentOf(j)}
	if v.Metrics, err = tx.SummarizeMetrics(ws, j.Name); err != nil {
		return nil, err
	}
	if v.Params, err = tx.ListRunParams(ws, j.Name); err != nil {
		return nil, err
	}
	v.Tags, err = tx.ListRunTags(ws, j.Name)
	return v, err
}

// CreateRun is MLflow's runs/create. A run is a job: inside a job (its
// tracking token) it answers the job's own run, with the request's tags
// and name set on it; a user must submit a job instead (EINVALID).
func (s *Service) CreateRun(ctx context.Context, p *identity.Principal, ws, experimentID, runName string, tags []mlflowrun.RunTag) (*RunView, error) {
	if p == nil || p.Kind != identity.PrincipalJobRun {
		return nil, core.Errorf(core.EINVALID, "a run is a job: submit a job (`shoal job create`); runs/create is answered only inside a job, with its MLFLOW_TRACKING_TOKEN")
	}
	_, job := runOf(p)
	if experimentID != "" {
		own, err := s.ownExperiment(ctx, p)
		if err != nil {
			return nil, err
		}
		if !strings.EqualFold(own, experimentID) {
			return nil, core.FieldErrorf("experiment_id", "is %q, but job %s is in experiment %s: a job's run is in its job's experiment (experiment_name)", experimentID, job, own)
		}
	}
	if runName != "" {
		tags = append(tags, mlflowrun.RunTag{Key: RunNameTag, Value: runName})
	}
	if err := s.Log(ctx, p, ws, job, Batch{Tags: tags}); err != nil {
		return nil, err
	}
	return s.GetRun(ctx, p, ws, job)
}

// UpdateRun is MLflow's runs/update. The run's status and end time are
// its job's, which the server keeps: a status is checked but changes
// nothing (the job's own end says how it ended); a name is kept as the
// mlflow.runName tag.
func (s *Service) UpdateRun(ctx context.Context, p *identity.Principal, ws, runID, status, runName string) (*RunView, error) {
	if status != "" && !runStatuses[status] {
		return nil, core.FieldErrorf("status", "%q is not a run status: RUNNING, SCHEDULED, FINISHED, FAILED or KILLED", status)
	}
	var b Batch
	if runName != "" {
		b.Tags = []mlflowrun.RunTag{{Key: RunNameTag, Value: runName}}
	}
	if err := s.Log(ctx, p, ws, runID, b); err != nil {
		return nil, err
	}
	return s.GetRun(ctx, p, ws, runID)
}

// Log writes a batch to the run of job runID in ws, all of it or (past a
// limit, or a parameter set to another value) none of it.
func (s *Service) Log(ctx context.Context, p *identity.Principal, ws, runID string, b Batch) error {
	if err := s.mayWrite(ctx, p, ws, runID); err != nil {
		return err
	}
	if err := checkBatch(b); err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx store.Tx) error {
		j, err := jobRun(tx, ws, runID)
		if err != nil {
			return err
		}
		if err := checkLimits(tx, ws, j.Name, b); err != nil {
			return err
		}
		if len(b.Metrics) > 0 {
			if err := tx.AppendMetrics(ws, j.Name, b.Metrics); err != nil {
				return err
			}
		}
		if err := writeParams(tx, ws, j.Name, b.Params); err != nil {
			return err
		}
		for _, t := range b.Tags {
			if err := tx.PutRunTag(ws, j.Name, t); err != nil {
				return err
			}
		}
		return nil
	})
}

// checkBatch checks a batch's shape: its size and every key and value.
func checkBatch(b Batch) error {
	switch {
	case len(b.Metrics) > mlflowrun.MaxLogBatchMetrics:
		return core.FieldErrorf("metrics", "has %d entries; a request may log at most %d", len(b.Metrics), mlflowrun.MaxLogBatchMetrics)
	case len(b.Params) > mlflowrun.MaxLogBatchParams:
		return core.FieldErrorf("params", "has %d entries; a request may log at most %d", len(b.Params), mlflowrun.MaxLogBatchParams)
	case len(b.Tags) > mlflowrun.MaxLogBatchTags:
		return core.FieldErrorf("tags", "has %d entries; a request may log at most %d", len(b.Tags), mlflowrun.MaxLogBatchTags)
	}
	for i, m := range b.Metrics {
		if err := mlflowrun.ValidateMetricPoint(fmt.Sprintf("metrics[%d]", i), m); err != nil {
			return err
		}
	}
	for i, kv := range b.Params {
		if err := mlflowrun.ValidateRunKey(fmt.Sprintf("params[%d].key", i), kv.Key); err != nil {
			return err
		}
		if err := mlflowrun.ValidateRunValue(fmt.Sprintf("params[%d].value", i), kv.Value, mlflowrun.MaxParamValueLength); err != nil {
			return err
		}
	}
	for i, kv := range b.Tags {
		if err := mlflowrun.ValidateRunKey(fmt.Sprintf("tags[%d].key", i), kv.Key); err != nil {
			return err
		}
		if err := mlflowrun.ValidateRunValue(fmt.Sprintf("tags[%d].value", i), kv.Value, mlflowrun.MaxTagValueLength); err != nil {
			return err
		}
	}
	return nil
}

// checkLimits refuses (EQUOTA) a batch that would take a run past its
// keys, points, parameters or tags. The run's summary is the store's
// running totals (a row per metric, at most MaxRunMetricKeys), not a sum
// over its points: the check costs the same in a run of 2,000,000 points
// as in an empty one, inside the writer's transaction.
func checkLimits(tx store.Tx, ws, job string, b Batch) error {
	if len(b.Metrics) > 0 {
		sums, err := tx.SummarizeMetrics(ws, job)
		if err != nil {
			return err
		}
		points := map[string]int{}
		for _, m := range sums {
			points[m.Key] = m.Points
		}
		for _, m := range b.Metrics {
			points[m.Key]++
			if points[m.Key] > mlflowrun.MaxMetricPoints {
				return core.Errorf(core.EQUOTA, "metric %s of run %s would have more than %d points", m.Key, job, mlflowrun.MaxMetricPoints)
			}
		}
		if len(points) > mlflowrun.MaxRunMetricKeys {
			return core.Errorf(core.EQUOTA, "run %s would have %d metrics; a run may have at most %d", job, len(points), mlflowrun.MaxRunMetricKeys)
		}
	}
	if len(b.Params) > 0 {
		ps, err := tx.ListRunParams(ws, job)
		if err != nil {
			return err
		}
		keys := map[string]bool{}
		for _, kv := range ps {
			keys[kv.Key] = true
		}
		for _, kv := range b.Params {
			keys[kv.Key] = true
		}
		if len(keys) > mlflowrun.MaxRunParams {
			return core.Errorf(core.EQUOTA, "run %s would have %d parameters; a run may have at most %d", job, len(keys), mlflowrun.MaxRunParams)
		}
	}
	if len(b.Tags) > 0 {
		ts, err := tx.ListRunTags(ws, job)
		if err != nil {
			return err
		}
		keys := map[string]bool{}
		for _, kv := range ts {
			keys[kv.Key] = true
		}
		for _, kv := range b.Tags {
			keys[kv.Key] = true
		}
		if len(keys) > mlflowrun.MaxRunTags {
			return core.Errorf(core.EQUOTA, "run %s would have %d tags; a run may have at most %d", job, len(keys), mlflowrun.MaxRunTags)
		}
	}
	return nil
}

// writeParams sets parameters as MLflow does: the same value again is no
// change, another value is refused.
func writeParams(tx store.Tx, ws, job string, params []mlflowrun.RunParam) error {
	if len(params) == 0 {
		return nil
	}
	set, err := tx.ListRunParams(ws, job)
	if err != nil {
		return err
	}
	have := map[string]string{}
	for _, kv := range set {
		have[kv.Key] = kv.Value
	}
	for i, kv := range params {
		if v, ok := have[kv.Key]; ok {
			if v != kv.Value {
				return core.FieldErrorf(fmt.Sprintf("params[%d]", i), "parameter %s of run %s is already %q: a parameter is set once (new value %q)", kv.Key, job, v, kv.Value)
			}
			continue
		}
		if err := tx.InsertRunParam(ws, job, kv); err != nil {
			return err
		}
		have[kv.Key] = kv.Value
	}
	return nil
}

// History is MLflow's metrics/get-history: a metric's points in step
// order.
func (s *Service) History(ctx context.Context, p *identity.Principal, ws, runID, key string) ([]mlflowrun.MetricPoint, error) {
	if key == "" {
		return nil, core.FieldErrorf("metric_key", "is required")
	}
	if err := s.mayRead(ctx, p, ws, runID); err != nil {
		return nil, err
	}
	var out []mlflowrun.MetricPoint
	err := s.store.View(ctx, func(tx store.Tx) error {
		j, err := jobRun(tx, ws, runID)
		if err != nil {
			return err
		}
		out, err = tx.ListMetricHistory(ws, j.Name, key)
		return err
	})
	return out, err
}

// MetricHistory reads a job's points of a metric for the server itself
// (a sweep's early termination), with no caller to authorize.
func (s *Service) MetricHistory(ctx context.Context, workspace, job, key string) ([]mlflowrun.MetricPoint, error) {
	var out []mlflowrun.MetricPoint
	err := s.store.View(ctx, func(tx store.Tx) (err error) {
		out, err = tx.ListMetricHistory(workspace, job, key)
		return err
	})
	return out, err
}

var _ mlflowrun.MetricHistory = (*Service)(nil)

// JobMetrics is what a job logged, for `job show --metrics` and the
// studio: each metric's summary, the parameters and tags, and, when
// history is set, every metric's points.
func (s *Service) JobMetrics(ctx context.Context, p *identity.Principal, ws, job string, history bool) (*mlflowrun.JobMetrics, error) {
	if err := s.auth.Authorize(ctx, p, ws, identity.ActJobsRead); err != nil {
		return nil, err
	}
	var out *mlflowrun.JobMetrics
	err := s.store.View(ctx, func(tx store.Tx) error {
		v, err := readRun(tx, ws, job)
		if err != nil {
			return err
		}
		out = &mlflowrun.JobMetrics{Metrics: v.Metrics, Params: v.Params, Tags: v.Tags}
		if history {
			out.History = map[string][]mlflowrun.MetricPoint{}
			for _, m := range v.Metrics {
				if out.History[m.Key], err = tx.ListMetricHistory(ws, v.Job.Name, m.Key); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return out, err
}
