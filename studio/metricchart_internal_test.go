package studio

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/mlflowrun"
)

// A metric's chart draws one point per logged value, from its lowest step
// at the left to its highest at the right, the lowest value at the bottom;
// its description says the count, range and last value; a key that is
// markup is escaped; no points and one point still draw.
func TestMetricChart(t *testing.T) {
	pts := []mlflowrun.MetricPoint{{Key: "loss", Value: 0.9, Step: 0}, {Key: "loss", Value: 0.5, Step: 1}, {Key: "loss", Value: 0.25, Step: 2}}
	svg := string(metricChart(1, "loss", pts))
	if !strings.Contains(svg, `points="48.0,8.0 201.0,65.8 354.0,102.0"`) {
		t.Errorf("the line's points: %s", svg)
	}
	if !strings.Contains(svg, "3 points from step 0 to 2, between 0.25 and 0.9; last 0.25 at step 2.") {
		t.Errorf("the description: %s", svg)
	}
	if svg := string(metricChart(2, "<b>x</b>", nil)); strings.Contains(svg, "<b>") || !strings.Contains(svg, "No points.") {
		t.Errorf("an empty chart of a key with markup: %s", svg)
	}
	if svg := string(metricChart(3, "acc", pts[:1])); !strings.Contains(svg, "<circle") || strings.Contains(svg, "NaN") {
		t.Errorf("a one-point chart: %s", svg)
	}
}
