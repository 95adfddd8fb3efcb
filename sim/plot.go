package sim

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Plot writes an SVG with two charts: each policy's cost (node-hours when
// there is no price) against its mean wait, and the node count over time
// of one replay (series, with the busy nodes beneath).
func Plot(w io.Writer, results []*Result, series *Result) error {
	const W, H, pad = 900.0, 360.0, 60.0
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`, W, 2*H, W, 2*H)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>`)
	// 1. Cost against mean wait.
	useCost := false
	for _, r := range results {
		if r.Cost > 0 {
			useCost = true
		}
	}
	y := func(r *Result) float64 {
		if useCost {
			return r.Cost
		}
		return r.NodeHours
	}
	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, r := range results {
		minX, maxX = math.Min(minX, r.WaitMean), math.Max(maxX, r.WaitMean)
		minY, maxY = math.Min(minY, y(r)), math.Max(maxY, y(r))
	}
	if maxX == minX {
		maxX = minX + 1
	}
	if maxY == minY {
		maxY = minY + 1
	}
	px := func(v float64) float64 { return pad + (W-2*pad)*(v-minX)/(maxX-minX) }
	py := func(v float64) float64 { return H - pad - (H-2*pad)*(v-minY)/(maxY-minY) }
	ylabel := "node-hours"
	if useCost {
		ylabel = "cost"
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="24" font-size="15" font-weight="bold">%s against mean queue wait, per idle policy</text>`, pad, strings.ToUpper(ylabel[:1])+ylabel[1:])
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#888"/><line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#888"/>`, pad, H-pad, W-pad, H-pad, pad, pad, pad, H-pad)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">mean wait (s): %.1f … %.1f</text>`, W/2, H-pad+36, minX, maxX)
	fmt.Fprintf(&b, `<text x="16" y="%.0f" transform="rotate(-90 16 %.0f)" text-anchor="middle">%s: %.1f … %.1f</text>`, H/2, H/2, ylabel, minY, maxY)
	for _, r := range results {
		dy := -6.0
		if r.Policy == "adaptive" {
			dy = 18 // below its point, clear of the fixed timeouts' labels
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="5" fill="%s"/><text x="%.1f" y="%.1f">%s</text>`,
			px(r.WaitMean), py(y(r)), color(r.Policy), px(r.WaitMean)+8, py(y(r))+dy, html.EscapeString(r.Policy))
	}
	// 2. Nodes over time.
	if series != nil && len(series.Series) > 0 {
		top := H
		end := series.Series[len(series.Series)-1].T
		peak := 1
		for _, p := range series.Series {
			peak = max(peak, p.Nodes)
		}
		sx := func(t float64) float64 { return pad + (W-2*pad)*t/math.Max(end, 1) }
		sy := func(n int) float64 { return top + H - pad - (H-2*pad)*float64(n)/float64(peak) }
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="15" font-weight="bold">Nodes over time (%s): all nodes, and busy ones</text>`, pad, top+24, html.EscapeString(series.Policy))
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#888"/>`, pad, top+H-pad, W-pad, top+H-pad)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">days: 0 … %.1f; nodes: 0 … %d</text>`, W/2, top+H-pad+36, end/86400, peak)
		for _, f := range []struct {
			color string
			val   func(Point) int
		}{{"#9ecae1", func(p Point) int { return p.Nodes }}, {"#08519c", func(p Point) int { return p.Busy }}} {
			var pts []string
			for i, p := range series.Series {
				x2 := end
				if i+1 < len(series.Series) {
					x2 = series.Series[i+1].T
				}
				pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", sx(p.T), sy(f.val(p)), sx(x2), sy(f.val(p))))
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1" points="%s"/>`, f.color, strings.Join(pts, " "))
		}
	}
	b.WriteString(`</svg>`)
	_, err := io.WriteString(w, b.String())
	return err
}

func color(policy string) string {
	if policy == "adaptive" {
		return "#d62728"
	}
	return "#1f77b4"
}
