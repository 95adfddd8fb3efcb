// Package mlflowrun is a job's run as MLflow's tracking API sees it: the
// metrics, parameters and tags a job logs from inside (mlflow.log_metric
// and friends), their limits, and the workspace's experiments. The run of
// a job is the job itself (its run ID is the job's name, as on Azure ML),
// and its experiment is the job's experiment_name; the records name the
// job by name, so this kind needs nothing of the job's type.
package mlflowrun

import (
	"context"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shoal-ml/shoal/domain/core"
)

// Limits of what one job's run may hold. A request past them is refused
// (MLflow's RESOURCE_LIMIT_EXCEEDED or INVALID_PARAMETER_VALUE) and
// nothing of it is written.
const (
	// MaxRunKeyLength bounds a metric's, parameter's or tag's key, in
	// bytes (MLflow's own bound for keys).
	MaxRunKeyLength = 250
	// MaxParamValueLength bounds a parameter's value, in bytes (MLflow
	// 2's bound).
	MaxParamValueLength = 6000
	// MaxTagValueLength bounds a tag's value, in bytes (MLflow's bound).
	MaxTagValueLength = 8000
	// MaxRunMetricKeys bounds the distinct metric keys of one run.
	MaxRunMetricKeys = 200
	// MaxMetricPoints bounds the points of one metric key of one run.
	MaxMetricPoints = 10000
	// MaxRunParams bounds the parameters of one run.
	MaxRunParams = 500
	// MaxRunTags bounds the tags of one run.
	MaxRunTags = 200
	// MaxLogBatchMetrics, MaxLogBatchParams and MaxLogBatchTags bound
	// one log-batch request, as MLflow's server does.
	MaxLogBatchMetrics = 1000
	MaxLogBatchParams  = 100
	MaxLogBatchTags    = 100
)

// DefaultExperiment is the experiment of a job without experiment_name,
// as MLflow and Azure ML name it.
const DefaultExperiment = "Default"

// MetricPoint is one logged value of a metric.
type MetricPoint struct {
	Key   string  `json:"key"`
	Value float64 `json:"value"`
	// Timestamp is milliseconds since the epoch, as the job said.
	Timestamp int64 `json:"timestamp"`
	Step      int64 `json:"step"`
}

// RunParam is a run's parameter: set once, never changed.
type RunParam struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// RunTag is a run's tag: set again, it is replaced.
type RunTag struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// MetricSummary is a metric of a run at a glance: its last point (the
// highest step, then the latest timestamp), its extremes and its count.
type MetricSummary struct {
	Key    string  `json:"key"`
	Last   float64 `json:"last"`
	Step   int64   `json:"step"`
	Time   int64   `json:"timestamp"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Points int     `json:"points"`
}

// JobMetrics is what a job logged: each metric's summary and, when asked,
// its history; the parameters and the tags.
type JobMetrics struct {
	Metrics []MetricSummary          `json:"metrics"`
	History map[string][]MetricPoint `json:"history,omitempty"`
	Params  []RunParam               `json:"params"`
	Tags    []RunTag                 `json:"tags"`
}

// MetricHistory reads the points a job logged for a metric, ordered by
// step then timestamp; none is an empty slice. It is what a sweep's early
// termination reads of its trials.
type MetricHistory interface {
	MetricHistory(ctx context.Context, workspace, job, key string) ([]MetricPoint, error)
}

// ValidateRunKey checks a metric's, parameter's or tag's key (field names
// it in the error): 1 to MaxRunKeyLength bytes of printable UTF-8 without
// "..", the rule MLflow applies (keys become file names in its own store).
func ValidateRunKey(field, key string) error {
	switch {
	case key == "":
		return core.FieldErrorf(field, "is required")
	case len(key) > MaxRunKeyLength:
		return core.FieldErrorf(field, "is %d bytes long; at most %d are allowed", len(key), MaxRunKeyLength)
	case !utf8.ValidString(key) || strings.ContainsFunc(key, core.IsUnprintable):
		return core.FieldErrorf(field, "must be printable text: no control characters and valid UTF-8")
	case strings.Contains(key, "..") || strings.HasPrefix(key, "/"):
		return core.FieldErrorf(field, "%q may not contain '..' or start with '/'", key)
	}
	return nil
}

// ValidateMetricPoint checks a point to log: its key, a finite value (a
// SQL column keeps no NaN) and a timestamp that is not negative.
func ValidateMetricPoint(field string, p MetricPoint) error {
	if err := ValidateRunKey(field+".key", p.Key); err != nil {
		return err
	}
	if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
		return core.FieldErrorf(field+".value", "must be a finite number")
	}
	if p.Timestamp < 0 {
		return core.FieldErrorf(field+".timestamp", "must be milliseconds since the epoch, not negative")
	}
	return nil
}

// ValidateRunValue checks a parameter's or tag's value against max bytes.
func ValidateRunValue(field, value string, max int) error {
	if len(value) > max {
		return core.FieldErrorf(field, "is %d bytes long; at most %d are allowed", len(value), max)
	}
	if !utf8.ValidString(value) {
		return core.FieldErrorf(field, "must be valid UTF-8")
	}
	return nil
}

// Experiment is an MLflow experiment of a workspace: a name jobs share
// (experiment_name). It is recorded when a job's run or a user first asks
// for it by name or creates it; its ID is its name.
type Experiment struct {
	Workspace string
	Name      string
	CreatedOn time.Time
}
