package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
)

// TestMLflowPointLimitHoldsExactly: the limits a log-batch is checked
// against come from the run's running totals, and hold to the point: a
// metric takes exactly MaxMetricPoints points; a batch one past is
// refused whole with RESOURCE_LIMIT_EXCEEDED (its points of another
// metric too), and so is a single point past, naming the metric and the
// limit; another metric still takes points; the totals `job show
// --metrics` reads count every point.
func TestMLflowPointLimitHoldsExactly(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	maxN := 1
	if _, _, err := e.svc.CreateOrApplyCompute(ctx, "default", &compute.ComputeSpec{Name: "cpu", Size: "Standard_DS3_v2", MaxInstances: &maxN}, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.svc.SubmitJob(ctx, "default", &job.JobSpec{Name: "j1", Command: "echo hi", Compute: "cpu"}); err != nil {
		t.Fatal(err)
	}
	tok := addUser(t, e, "carl", identity.RoleContributor)
	points := func(from, n int, key string) []string {
		var ms []string
		for i := from; i < from+n; i++ {
			ms = append(ms, fmt.Sprintf(`{"key":%q,"value":%d,"timestamp":%d,"step":%d}`, key, i, i, i))
		}
		return ms
	}
	batch := func(ms ...[]string) string {
		return `{"run_id":"j1","metrics":[` + strings.Join(slices.Concat(ms...), ",") + `]}`
	}
	for from := 0; from < mlflowrun.MaxMetricPoints-1000; from += mlflowrun.MaxLogBatchMetrics {
		mustSend(t, e, tok, "POST", mlflowBase+"runs/log-batch", batch(points(from, mlflowrun.MaxLogBatchMetrics, "loss")), http.StatusOK)
	}
	mustSend(t, e, tok, "POST", mlflowBase+"runs/log-batch", batch(points(9000, 499, "loss"), points(9499, 1, "loss")), http.StatusOK)
	// 500 points to go: a batch of 501 more is refused whole, its acc
	// points with it.
	wantMLflowError(t, "a batch one point past the limit",
		send(t, e, tok, "POST", mlflowBase+"runs/log-batch", batch(points(0, 499, "acc"), points(9500, 501, "loss")), nil), http.StatusBadRequest, "RESOURCE_LIMIT_EXCEEDED")
	mustSend(t, e, tok, "POST", mlflowBase+"runs/log-batch", batch(points(9500, 500, "loss")), http.StatusOK)
	r := send(t, e, tok, "POST", mlflowBase+"runs/log-metric", `{"run_id":"j1","key":"loss","value":1,"timestamp":1,"step":1}`, nil)
	wantMLflowError(t, "the point past the limit", r, http.StatusBadRequest, "RESOURCE_LIMIT_EXCEEDED")
	if !strings.Contains(string(r.body), "loss") || !strings.Contains(string(r.body), fmt.Sprint(mlflowrun.MaxMetricPoints)) {
		t.Errorf("the refusal does not name the metric and the limit: %s", r)
	}
	mustSend(t, e, tok, "POST", mlflowBase+"runs/log-metric", `{"run_id":"j1","key":"acc","value":0.5,"timestamp":1,"step":1}`, http.StatusOK)

	var got mlflowrun.JobMetrics
	if err := json.Unmarshal(mustSend(t, e, tok, "GET", "/api/v1/workspaces/default/jobs/j1/metrics", "", http.StatusOK).body, &got); err != nil {
		t.Fatal(err)
	}
	want := []mlflowrun.MetricSummary{
		{Key: "acc", Last: 0.5, Step: 1, Time: 1, Min: 0.5, Max: 0.5, Points: 1},
		{Key: "loss", Last: 9999, Step: 9999, Time: 9999, Min: 0, Max: 9999, Points: mlflowrun.MaxMetricPoints},
	}
	if fmt.Sprint(got.Metrics) != fmt.Sprint(want) {
		t.Errorf("the run's metrics: %+v, want %+v", got.Metrics, want)
	}
}
