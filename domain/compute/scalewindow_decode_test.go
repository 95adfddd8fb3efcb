package compute_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// scale_windows decodes with its triggers; an unknown key inside a window
// or its trigger is refused naming its path, and the read-only
// scale_window that `compute show -o yaml` prints is ignored on input.
func TestDecodeScaleWindows(t *testing.T) {
	spec, err := compute.DecodeComputeSpec([]byte(`{"name": "cpu", "type": "amlcompute",
		"scale_windows": [{"name": "nights", "trigger": {"type": "cron", "expression": "0 20 * * *", "time_zone": "UTC"}, "min_instances": 0.0, "max_instances": 0},
		                  {"name": "weekdays", "trigger": {"type": "recurrence", "frequency": "week", "interval": 1, "schedule": {"hours": 7, "minutes": [0], "week_days": ["monday"]}}}],
		"scale_window": {"window": "forged", "min_instances": 99, "max_instances": 99}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.ScaleWindows) != 2 || spec.ScaleWindows[0].Name != "nights" || *spec.ScaleWindows[0].MaxInstances != 0 ||
		spec.ScaleWindows[1].MinInstances != nil || spec.ScaleWindows[1].Trigger.Schedule.Hours[0] != 7 {
		t.Fatalf("decoded %+v", spec.ScaleWindows)
	}
	if spec.ScaleWindow != nil {
		t.Fatalf("the read-only scale_window was taken from input: %+v", spec.ScaleWindow)
	}
	for _, tc := range []struct{ doc, field string }{
		{`{"name": "cpu", "type": "amlcompute", "scale_windows": [{"name": "n", "trigger": {"type": "cron", "expression": "0 20 * * *"}, "max_instance": 0}]}`, "scale_windows[0].max_instance"},
		{`{"name": "cpu", "type": "amlcompute", "scale_windows": [{"name": "n", "trigger": {"type": "cron", "expresion": "0 20 * * *"}}]}`, "scale_windows[0].trigger.expresion"},
		{`{"name": "cpu", "type": "amlcompute", "scale_windows": {"name": "n"}}`, "scale_windows"},
		{`{"name": "cpu", "type": "amlcompute", "scale_windows": [{"name": "a", "trigger": {"type": "cron", "expression": "0 20 * * *"}}, {"name": "n", "trigger": {"type": "cron", "expression": "0 20 * * *"}, "max_instances": 2.5}]}`, "scale_windows[1].max_instances"},
		{`{"name": "cpu", "type": "amlcompute", "scale_windows": [{"name": "n", "trigger": {"type": "cron", "expression": "0 20 * * *"}, "min_instances": "3"}]}`, "scale_windows[0].min_instances"},
		{`{"name": "ci-1", "type": "computeinstance", "scale_windows": []}`, "scale_windows"},
	} {
		_, err := compute.DecodeComputeSpec([]byte(tc.doc))
		var ce *core.Error
		if core.ErrorCode(err) != core.EINVALID {
			t.Fatalf("%s: %v, want EINVALID", tc.doc, err)
		}
		if e, ok := err.(*core.Error); ok {
			ce = e
		}
		if ce == nil || (ce.Field != tc.field && !strings.Contains(ce.Message, tc.field)) {
			t.Fatalf("%s: %v, want the field %s named", tc.doc, err, tc.field)
		}
	}
}
