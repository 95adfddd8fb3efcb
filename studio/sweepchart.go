package studio

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/job"
)

// trialRow is a sweep's trial as the sweep's page lists it.
type trialRow struct {
	Index  int
	Job    string
	Status string
	// Params are the hyperparameters as name=value, by name.
	Params string
	// Metric is the primary metric's last value, empty when none.
	Metric string
	// Early is the early-termination policy's code and Reason its words
	// (or why the trial did not run).
	Early, Reason string
	Best          bool
}

// trialRows are a sweep's trials for its page's table.
func trialRows(j *job.Job) []trialRow {
	out := make([]trialRow, 0, len(j.Trials))
	for _, t := range j.Trials {
		names := make([]string, 0, len(t.Parameters))
		for k := range t.Parameters {
			names = append(names, k)
		}
		sort.Strings(names)
		ps := make([]string, len(names))
		for i, k := range names {
			ps[i] = k + "=" + job.FormatInputValue(t.Parameters[k])
		}
		r := trialRow{Index: t.Index, Job: t.Job, Status: t.Status, Params: strings.Join(ps, ", "),
			Early: t.EarlyTerminated, Reason: t.Reason, Best: t.Job != "" && t.Job == j.BestChildRunID}
		if t.Metric != nil {
			r.Metric = strconv.FormatFloat(*t.Metric, 'g', 6, 64)
		}
		out = append(out, r)
	}
	return out
}

// sweepObjective is a sweep's primary metric and goal, empty when the
// stored document lacks them.
func sweepObjective(j *job.Job) (metric, goal string) {
	if j.Sweep != nil && j.Sweep.Objective != nil {
		return j.Sweep.Objective.PrimaryMetric, j.Sweep.Objective.Goal
	}
	return "", ""
}

// sweepChart draws the primary metric's last value per trial as points
// over the trials' indexes, server-side like the node chart: the best
// trial ringed, the ones early termination cancelled drawn as crosses,
// every point titled with its trial and value. A trial that logged no
// value has its slot on the axis and no point. The description says it
// all in words for screen readers.
func sweepChart(trials []*job.SweepTrialStatus, best, metric, goal string) template.HTML {
	const w, h, left, bottom, top, right = 720.0, 200.0, 56.0, 22.0, 10.0, 8.0
	esc := template.HTMLEscapeString
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart sweep" viewBox="0 0 %.0f %.0f" role="img" aria-labelledby="sweep-title sweep-desc" xmlns="http://www.w3.org/2000/svg">`, w, h)
	label := metric
	if label == "" {
		label = "primary metric"
	}
	fmt.Fprintf(&b, `<title id="sweep-title">%s per trial</title>`, esc(label))
	lo, hi := math.Inf(1), math.Inf(-1)
	var valued, early []string
	var bestText string
	for _, t := range trials {
		if t.EarlyTerminated != "" {
			early = append(early, strconv.Itoa(t.Index))
		}
		if t.Metric == nil || math.IsNaN(*t.Metric) || math.IsInf(*t.Metric, 0) {
			continue
		}
		lo, hi = math.Min(lo, *t.Metric), math.Max(hi, *t.Metric)
		valued = append(valued, strconv.Itoa(t.Index))
		if best != "" && t.Job == best {
			bestText = fmt.Sprintf("best %s by trial %d (job %s)", num(*t.Metric), t.Index, t.Job)
		}
	}
	n := len(trials)
	x := func(i int) float64 { return left + (w-left-right)*(float64(i)+0.5)/float64(max(n, 1)) }
	vspan := hi - lo
	y := func(v float64) float64 {
		if vspan == 0 {
			return (top + h - bottom) / 2
		}
		return h - bottom - (h-bottom-top)*(v-lo)/vspan
	}
	if len(valued) > 0 {
		for _, v := range []float64{lo, hi} {
			fmt.Fprintf(&b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/><text class="axis" x="%.1f" y="%.1f" text-anchor="end">%s</text>`,
				left, w-right, y(v), y(v), left-4, y(v)+4, num(v))
		}
	}
	// Label every trial's slot while they fit, else every k-th.
	every := max(1, (n+23)/24)
	for i, t := range trials {
		if i%every == 0 || i == n-1 {
			fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="middle">%d</text>`, x(i), h-6, t.Index)
		}
	}
	for i, t := range trials {
		if t.Metric == nil || math.IsNaN(*t.Metric) || math.IsInf(*t.Metric, 0) {
			continue
		}
		px, py := x(i), y(*t.Metric)
		tip := fmt.Sprintf("trial %d: %s %s", t.Index, label, num(*t.Metric))
		class := "pt"
		if t.EarlyTerminated != "" {
			class += " early"
			tip += ", stopped early (" + t.EarlyTerminated + ")"
		}
		isBest := best != "" && t.Job == best
		if isBest {
			class += " best"
			tip += ", best"
		}
		fmt.Fprintf(&b, `<g class="%s" data-trial="%d"><title>%s</title>`, class, t.Index, esc(tip))
		if isBest {
			fmt.Fprintf(&b, `<circle class="ring" cx="%.1f" cy="%.1f" r="8"/>`, px, py)
		}
		if t.EarlyTerminated != "" {
			fmt.Fprintf(&b, `<path class="cross" d="M%.1f,%.1f l8,8 m0,-8 l-8,8"/>`, px-4, py-4)
		} else {
			fmt.Fprintf(&b, `<circle class="dot" cx="%.1f" cy="%.1f" r="4"/>`, px, py)
		}
		b.WriteString(`</g>`)
	}
	var desc string
	switch {
	case n == 0:
		desc = "No trials yet."
	case len(valued) == 0:
		desc = fmt.Sprintf("%d trials, none has logged %s yet.", n, label)
	default:
		desc = fmt.Sprintf("%d trials, %d with a value of %s", n, len(valued), label)
		if goal != "" {
			desc += " (" + goal + ")"
		}
		desc += fmt.Sprintf(", between %s and %s", num(lo), num(hi))
		if bestText != "" {
			desc += "; " + bestText
		}
		desc += "."
	}
	if len(early) > 0 {
		desc += " Stopped early: trials " + strings.Join(early, ", ") + "."
	}
	fmt.Fprintf(&b, `<desc id="sweep-desc">%s</desc></svg>`, esc(desc))
	b.WriteString(`<ul class="legend"><li><span class="mark dot"></span>trial</li><li><span class="mark best"></span>best</li><li><span class="mark early">×</span>stopped early</li></ul>`)
	return template.HTML(b.String())
}
