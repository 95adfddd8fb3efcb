package service_test

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/schedule"
)

// Bad windows are refused at create, naming the field.
func TestScaleWindowRefusals(t *testing.T) {
	h := newHarness(t, "")
	idle := 120
	for _, tc := range []struct {
		name  string
		typ   string
		w     *schedule.ScaleWindow
		field string
	}{
		{"bad trigger", "amlcompute", &schedule.ScaleWindow{Name: "n", Trigger: &schedule.Trigger{Type: "cron", Expression: "0 0 20 * * *"}, MaxInstances: ip(0)}, "scale_windows[0].trigger.expression"},
		{"min > max", "amlcompute", &schedule.ScaleWindow{Name: "n", Trigger: &schedule.Trigger{Type: "cron", Expression: "0 20 * * *"}, MinInstances: ip(3), MaxInstances: ip(1)}, "scale_windows[0].max_instances"},
		{"negative", "amlcompute", &schedule.ScaleWindow{Name: "n", Trigger: &schedule.Trigger{Type: "cron", Expression: "0 20 * * *"}, MaxInstances: ip(-1)}, "scale_windows[0].max_instances"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, &compute.ComputeSpec{
				Name: "cpu1", Type: tc.typ, MinInstances: ip(0), MaxInstances: ip(2), IdleTimeBeforeScaleDown: &idle,
				ScaleWindows: []*schedule.ScaleWindow{tc.w},
			}, "")
			var ce *core.Error
			if core.ErrorCode(err) != core.EINVALID || !asError(err, &ce) || ce.Field != tc.field {
				t.Fatalf("got %v, want EINVALID on %s", err, tc.field)
			}
		})
	}
}

func asError(err error, out **core.Error) bool {
	ce, ok := err.(*core.Error)
	*out = ce
	return ok
}
