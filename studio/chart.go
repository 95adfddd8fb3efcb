package studio

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/node"
)

// chartSeries are the node states the chart stacks, bottom first, with
// their CSS classes (colours follow the theme).
var chartSeries = []struct {
	name  string
	class string
	count func(*node.NodeSample) int
}{
	{"running", "s-running", func(s *node.NodeSample) int { return s.Running }},
	{"idle", "s-idle", func(s *node.NodeSample) int { return s.Idle }},
	{"preparing", "s-preparing", func(s *node.NodeSample) int { return s.Preparing }},
	{"leaving", "s-leaving", func(s *node.NodeSample) int { return s.Leaving }},
	{"unusable", "s-unusable", func(s *node.NodeSample) int { return s.Unusable }},
}

// stackedChart draws a cluster's node counts by state from from to to as
// an SVG stacked step chart, server-side (no script needed to read it),
// with a text summary for screen readers.
func stackedChart(samples []*node.NodeSample, from, to time.Time) template.HTML {
	const w, h, left, bottom, top = 720.0, 200.0, 36.0, 22.0, 8.0
	span := to.Sub(from).Seconds()
	maxN := 1
	for _, s := range samples {
		maxN = max(maxN, s.Billed())
	}
	x := func(t time.Time) float64 {
		if t.Before(from) {
			t = from
		}
		return left + (w-left-4)*t.Sub(from).Seconds()/span
	}
	y := func(n int) float64 { return h - bottom - (h-bottom-top)*float64(n)/float64(maxN) }
	var b strings.Builder
	var summary []string
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %.0f %.0f" role="img" aria-labelledby="chart-title chart-desc" xmlns="http://www.w3.org/2000/svg">`, w, h)
	b.WriteString(`<title id="chart-title">Nodes by state</title>`)
	// Axes and gridlines.
	for i := 0; i <= maxN; i += max(1, maxN/4) {
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/><text class="axis" x="%.1f" y="%.1f" text-anchor="end">%d</text>`,
			left, w-4, y(i), y(i), left-6, y(i)+4, i)
	}
	layout, precise := "15:04", ""
	if to.Sub(from) < 10*time.Minute {
		layout, precise = "15:04:05", ` data-seconds="true"`
	}
	for i := 0; i <= 6; i++ {
		t := from.Add(time.Duration(float64(i) / 6 * float64(to.Sub(from))))
		fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="middle"><tspan data-time="%s"%s>%s</tspan></text>`,
			x(t), h-6, t.UTC().Format(time.RFC3339), precise, t.UTC().Format(layout))
	}
	// One polygon per state: the band between the states below it and
	// itself, as steps (a count holds until the next sample).
	type point struct {
		t    time.Time
		base []int
	}
	var pts []point
	for i, s := range samples {
		t := s.Time
		if i == 0 || t.Before(from) {
			t = maxTime(t, from)
		}
		base := make([]int, len(chartSeries)+1)
		for k, ser := range chartSeries {
			base[k+1] = base[k] + ser.count(s)
		}
		pts = append(pts, point{t, base})
	}
	for k, ser := range chartSeries {
		if len(pts) == 0 {
			break
		}
		var upper, lower []string
		for i, p := range pts {
			end := to
			if i+1 < len(pts) {
				end = pts[i+1].t
			}
			upper = append(upper, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(p.t), y(p.base[k+1]), x(end), y(p.base[k+1])))
			lower = append([]string{fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(end), y(p.base[k]), x(p.t), y(p.base[k]))}, lower...)
		}
		fmt.Fprintf(&b, `<polygon class="%s" points="%s %s"><title>%s</title></polygon>`, ser.class, strings.Join(upper, " "), strings.Join(lower, " "), ser.name)
	}
	if len(samples) > 0 {
		last := samples[len(samples)-1]
		for _, ser := range chartSeries {
			summary = append(summary, fmt.Sprintf("%d %s", ser.count(last), ser.name))
		}
	}
	desc := "No nodes in this period."
	if len(summary) > 0 {
		desc = "Now: " + strings.Join(summary, ", ") + "."
	}
	fmt.Fprintf(&b, `<desc id="chart-desc">%s</desc></svg>`, template.HTMLEscapeString(desc))
	b.WriteString(`<ul class="legend">`)
	for _, ser := range chartSeries {
		fmt.Fprintf(&b, `<li><span class="swatch %s"></span>%s</li>`, ser.class, ser.name)
	}
	b.WriteString(`</ul>`)
	return template.HTML(b.String())
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// timeZones are the time zones the schedule editor offers (Windows names,
// as Azure's studio; IANA names are accepted by the API too).
var timeZones = []string{"UTC", "Pacific Standard Time", "Mountain Standard Time", "Central Standard Time", "Eastern Standard Time",
	"GMT Standard Time", "W. Europe Standard Time", "Central Europe Standard Time", "Romance Standard Time", "E. Europe Standard Time",
	"Russian Standard Time", "India Standard Time", "China Standard Time", "Tokyo Standard Time", "Korea Standard Time",
	"AUS Eastern Standard Time", "New Zealand Standard Time", "E. South America Standard Time", "South Africa Standard Time"}
