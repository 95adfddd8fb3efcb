package studio_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/schedule"
)

// A cluster's page lists its scale windows and the bounds in force: here
// a yearly window that began in 2020 (in force whatever today is) and one
// that starts in 2100 (beyond what the engine looks ahead: never).
func TestClusterPageShowsScaleWindows(t *testing.T) {
	ts, token, svc := newServerWithServices(t)
	admin := as(t, svc, token)
	zero, three, four := 0, 3, 4
	spec := &compute.ComputeSpec{Name: "win-cpu", Type: compute.ComputeTypeCluster, MinInstances: &zero, MaxInstances: &four,
		ScaleWindows: []*schedule.ScaleWindow{
			{Name: "frozen", Trigger: &schedule.Trigger{Type: "cron", Expression: "0 0 1 1 *", StartTime: "2020-01-01T00:00:00"}, MaxInstances: &zero},
			{Name: "future", Trigger: &schedule.Trigger{Type: "recurrence", Frequency: "day", Interval: 1, StartTime: "2100-01-01T00:00:00", TimeZone: "Tokyo Standard Time"}, MinInstances: &three},
		}}
	if _, _, err := svc.CreateOrApplyCompute(admin, core.DefaultWorkspace, spec, ""); err != nil {
		t.Fatal(err)
	}
	code, body := page(t, ts, "/computes/win-cpu", token)
	if code != http.StatusOK {
		t.Fatalf("cluster page: %d\n%s", code, body)
	}
	for _, want := range []string{
		`<h2 id="h-windows">Scale windows</h2>`,
		`In force: min 0, max 0 (window frozen)`,
		`<tr data-window="frozen"><td>frozen</td><td><code>0 0 1 1 *</code></td><td>UTC</td><td>(cluster&#39;s)</td><td>0</td></tr>`,
		`<tr data-window="future"><td>future</td><td>every 1 day</td><td>Tokyo Standard Time</td><td>3</td><td>(cluster&#39;s)</td></tr>`,
	} {
		if !strings.Contains(body, want) {
			t.Fatalf("cluster page lacks %q:\n%s", want, body[strings.Index(body, "Details"):])
		}
	}
}
