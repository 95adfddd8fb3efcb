package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/domain/money"
)

// Tables print figures by one rule: a budget's percent to a tenth
// (777.2 %, not 777.2485714999999), its spend as money that a small limit
// can be read against (0.0007 of 0.001), a metric to six significant
// digits; JSON keeps every digit.
func TestTableFigures(t *testing.T) {
	budgets := []money.BudgetStatus{
		{Budget: &money.Budget{Scope: "workspace", Limit: 1, Period: "day", Action: "warn"}, Name: "workspace/day", Spent: 7.772485714999999, Percent: 777.2485714999999, Reached: true, PeriodStart: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)},
		{Budget: &money.Budget{Scope: "user:alice", Limit: 0.001, Period: "day", Action: "warn"}, Name: "user:alice/day", Spent: 0.0007000000000000001, Percent: 70.00000000000001, PeriodStart: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)},
	}
	metrics := &mlflowrun.JobMetrics{Metrics: []mlflowrun.MetricSummary{{Key: "loss", Last: 0.30000000000000004, Step: 9, Min: 0.12345678912345678, Max: 1234567.891, Points: 10}}}
	tableServer(t, map[string]any{"/api/v1/workspaces/default/budgets": budgets})
	got := output(t, "budget", "list", "-o", "table")
	for _, want := range []string{"777.2 %", "7.77 ", "0.0007 ", "70 %"} {
		if !strings.Contains(got, want) {
			t.Errorf("budget list -o table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "777.24857") || strings.Contains(got, "0.00070000") {
		t.Errorf("budget list -o table prints every digit:\n%s", got)
	}
	if js := output(t, "budget", "list"); !strings.Contains(js, "777.2485714999999") {
		t.Errorf("budget list JSON lost precision:\n%s", js)
	}
	// The metrics answer is an object, not a list tableServer wraps.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(metrics)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("SHOAL_SERVER", srv.URL)
	got = output(t, "job", "show", "-n", "run", "--metrics", "-o", "table")
	for _, want := range []string{"0.3 ", "0.123457", "1234568"} {
		if !strings.Contains(got, want) {
			t.Errorf("job show --metrics -o table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "0.30000000000000004") {
		t.Errorf("job show --metrics -o table prints 17 digits:\n%s", got)
	}
}
