package studio

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/mlflowrun"
)

// metricChart draws one metric's points as a small SVG line over its
// steps, server-side like the node chart; id makes its title's and
// description's IDs unique on a page with several. The description says
// the points, the range and the last value for screen readers.
func metricChart(id int, key string, pts []mlflowrun.MetricPoint) template.HTML {
	const w, h, left, bottom, top, right = 360.0, 120.0, 48.0, 18.0, 8.0, 6.0
	var b strings.Builder
	title, desc := fmt.Sprintf("metric-%d-title", id), fmt.Sprintf("metric-%d-desc", id)
	fmt.Fprintf(&b, `<svg class="chart metric" viewBox="0 0 %.0f %.0f" role="img" aria-labelledby="%s %s" xmlns="http://www.w3.org/2000/svg">`, w, h, title, desc)
	fmt.Fprintf(&b, `<title id="%s">%s by step</title>`, title, template.HTMLEscapeString(key))
	if len(pts) == 0 {
		fmt.Fprintf(&b, `<desc id="%s">No points.</desc></svg>`, desc)
		return template.HTML(b.String())
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	s0, s1 := pts[0].Step, pts[0].Step
	for _, p := range pts {
		lo, hi = math.Min(lo, p.Value), math.Max(hi, p.Value)
		s0, s1 = min(s0, p.Step), max(s1, p.Step)
	}
	vspan, sspan := hi-lo, float64(s1-s0)
	x := func(step int64) float64 {
		if sspan == 0 {
			return (left + w - right) / 2
		}
		return left + (w-left-right)*float64(step-s0)/sspan
	}
	y := func(v float64) float64 {
		if vspan == 0 {
			return (top + h - bottom) / 2
		}
		return h - bottom - (h-bottom-top)*(v-lo)/vspan
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	for _, v := range []float64{lo, hi} {
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/><text class="axis" x="%.1f" y="%.1f" text-anchor="end">%s</text>`,
			left, w-right, y(v), y(v), left-4, y(v)+4, num(v))
	}
	fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="start">step %d</text><text class="axis" x="%.1f" y="%.1f" text-anchor="end">%d</text>`,
		left, h-4, s0, w-right, h-4, s1)
	coords := make([]string, len(pts))
	for i, p := range pts {
		coords[i] = fmt.Sprintf("%.1f,%.1f", x(p.Step), y(p.Value))
	}
	fmt.Fprintf(&b, `<polyline class="line" fill="none" points="%s"/>`, strings.Join(coords, " "))
	if len(pts) == 1 {
		fmt.Fprintf(&b, `<circle class="dot" cx="%.1f" cy="%.1f" r="3"/>`, x(pts[0].Step), y(pts[0].Value))
	}
	last := pts[len(pts)-1]
	fmt.Fprintf(&b, `<desc id="%s">%s</desc></svg>`, desc, template.HTMLEscapeString(fmt.Sprintf(
		"%d points from step %d to %d, between %s and %s; last %s at step %d.", len(pts), s0, s1, num(lo), num(hi), num(last.Value), last.Step)))
	return template.HTML(b.String())
}
