package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/schedule"
)

// `compute show` prints a cluster's scale windows, the one in force and
// the next change: under the compute in a table, and whole in JSON for
// --query.
func TestComputeShowScaleWindows(t *testing.T) {
	zero, two, eight, four := 0, 2, 8, 4
	since := time.Date(2026, 1, 5, 19, 0, 0, 0, time.UTC)
	next := time.Date(2026, 1, 6, 6, 0, 0, 0, time.UTC)
	comp := &compute.Compute{ComputeSpec: compute.ComputeSpec{
		Name: "cpu", Type: "amlcompute", MinInstances: &zero, MaxInstances: &four,
		ScaleWindows: []*schedule.ScaleWindow{
			{Name: "nights", Trigger: &schedule.Trigger{Type: "cron", Expression: "0 20 * * *", TimeZone: "W. Europe Standard Time"}, MinInstances: &zero, MaxInstances: &zero},
			{Name: "mornings", Trigger: &schedule.Trigger{Type: "cron", Expression: "0 7 * * 1-5", TimeZone: "W. Europe Standard Time"}, MinInstances: &two, MaxInstances: &eight},
		},
		ScaleWindow: &schedule.ScaleWindowState{Window: "nights", Since: &since, NextChange: &next, NextWindow: "mornings"},
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/computes/cpu") {
			http.Error(w, `{"error":{"code":"NotFound","message":"unexpected"}}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(comp)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("SHOAL_SERVER", srv.URL)
	t.Setenv("SHOAL_TOKEN", "token")
	t.Setenv("SHOAL_WORKSPACE", "default")

	table := output(t, "compute", "show", "-n", "cpu", "-o", "table")
	for _, want := range []string{
		"Window", "In Force",
		`nights    cron "0 20 * * *" W. Europe Standard Time`,
		"yes",
		"in force: min 0, max 0 (window nights); next change 2026-01-06T06:00:00Z (window mornings)",
	} {
		if !strings.Contains(table, want) {
			t.Fatalf("table lacks %q:\n%s", want, table)
		}
	}
	if got := strings.TrimSpace(output(t, "compute", "show", "-n", "cpu", "--query", "scale_window.next_window", "-o", "tsv")); got != "mornings" {
		t.Fatalf("--query scale_window.next_window: %q", got)
	}
}
