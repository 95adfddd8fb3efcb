package studio

import (
	"fmt"
	"html/template"
	"net/url"
	"sort"
	"strings"

	"github.com/shoal-ml/shoal/domain/job"
)

// stepClass is the CSS class that colours a pipeline step (or a sweep
// trial) by its status. The statuses between the named ones share their
// neighbour's colour: a preparing or finalizing step is at work like a
// running one, a cancel requested is a cancel on its way.
func stepClass(status string) string {
	switch status {
	case job.JobCompleted:
		return "st-completed"
	case job.JobRunning, job.JobPreparing, job.JobFinalizing:
		return "st-running"
	case job.JobQueued:
		return "st-queued"
	case job.JobFailed:
		return "st-failed"
	case job.JobCanceled, job.JobCancelRequested:
		return "st-canceled"
	}
	return "st-notstarted"
}

// stepLevels is each step's depth in the graph: 0 for a step that reads
// no other step's outputs, else one more than the deepest step it reads
// from. A dependency on a step the list lacks is left out, and a cycle
// (which submission refuses, so only a damaged document has one) is cut
// where it closes, so that any stored list draws.
func stepLevels(steps []*job.PipelineStepStatus) map[string]int {
	byName := make(map[string]*job.PipelineStepStatus, len(steps))
	for _, s := range steps {
		byName[s.Name] = s
	}
	level := make(map[string]int, len(steps))
	visiting := map[string]bool{}
	var visit func(name string) int
	visit = func(name string) int {
		if l, ok := level[name]; ok {
			return l
		}
		if visiting[name] {
			return -1 // the edge that closes a cycle adds no depth
		}
		visiting[name] = true
		l := 0
		for _, d := range byName[name].DependsOn {
			if _, ok := byName[d]; ok {
				l = max(l, visit(d)+1)
			}
		}
		delete(visiting, name)
		level[name] = l
		return l
	}
	for _, s := range steps {
		visit(s.Name)
	}
	return level
}

// graphBox is a place in the drawing: a step's box, or a slot that an
// edge passes through on its way across a column (step nil), so that a
// long edge never runs under another step's box.
type graphBox struct {
	step       *job.PipelineStepStatus
	level, row int
	// preds are the places whose edges come in from the column before.
	preds []*graphBox
}

// graphEdge is a dependency: from the step read to the step reading,
// through a slot in every column between them.
type graphEdge struct {
	from, to *graphBox
	via      []*graphBox
}

// layoutSteps places the steps in columns by level and, within a column,
// in rows: the first column in the stored order, each next one ordered by
// the mean row of what comes in from the column before (ties in the
// stored order), so that edges cross little in the usual shapes. An edge
// that skips columns gets a slot in each (the layered drawing's dummy
// nodes). A dependency written twice is one edge.
func layoutSteps(steps []*job.PipelineStepStatus) (boxes map[string]*graphBox, edges []*graphEdge, levels, rows int) {
	level := stepLevels(steps)
	boxes = make(map[string]*graphBox, len(steps))
	cols := map[int][]*graphBox{}
	var order []*graphBox
	for _, s := range steps {
		if _, dup := boxes[s.Name]; dup {
			continue
		}
		b := &graphBox{step: s, level: level[s.Name]}
		boxes[s.Name] = b
		order = append(order, b)
		cols[b.level] = append(cols[b.level], b)
		levels = max(levels, b.level+1)
	}
	for _, to := range order {
		seen := map[string]bool{}
		for _, d := range to.step.DependsOn {
			from, ok := boxes[d]
			if !ok || seen[d] {
				continue
			}
			seen[d] = true
			e := &graphEdge{from: from, to: to}
			prev := from
			for l := from.level + 1; l < to.level; l++ {
				v := &graphBox{level: l, preds: []*graphBox{prev}}
				cols[l] = append(cols[l], v)
				e.via = append(e.via, v)
				prev = v
			}
			if prev.level < to.level { // not the edge that closes a cycle
				to.preds = append(to.preds, prev)
			}
			edges = append(edges, e)
		}
	}
	for l := 0; l < levels; l++ {
		col := cols[l]
		mean := make(map[*graphBox]float64, len(col))
		for _, b := range col {
			sum := 0.0
			for _, p := range b.preds {
				sum += float64(p.row)
			}
			if len(b.preds) > 0 {
				mean[b] = sum / float64(len(b.preds))
			}
		}
		sort.SliceStable(col, func(i, j int) bool { return mean[col[i]] < mean[col[j]] })
		for i, b := range col {
			b.row = i
		}
		rows = max(rows, len(col))
	}
	return boxes, edges, levels, rows
}

// Sizes of the pipeline drawing, in SVG units.
const (
	boxW, boxH     = 168.0, 48.0
	colGap, rowGap = 56.0, 20.0
	graphPad       = 12.0
	// boxLabelRunes is how much of a step's name fits its box; the whole
	// name is in the box's title and in the table below.
	boxLabelRunes = 20
)

// pipelineGraph draws a pipeline's steps as an SVG graph, server-side: a
// box per step in columns by level, coloured by status and linking to the
// step's child job once there is one, and an arrow per dependency from
// the step read to the step reading. A step whose type (types, by step
// name) is parallel says so under its status. Every name is user input,
// so every text and attribute is escaped.
func pipelineGraph(steps []*job.PipelineStepStatus, types map[string]string) template.HTML {
	boxes, edges, levels, rows := layoutSteps(steps)
	w := 2*graphPad + float64(levels)*boxW + float64(max(levels-1, 0))*colGap
	h := 2*graphPad + float64(rows)*boxH + float64(max(rows-1, 0))*rowGap
	x := func(b *graphBox) float64 { return graphPad + float64(b.level)*(boxW+colGap) }
	y := func(b *graphBox) float64 { return graphPad + float64(b.row)*(boxH+rowGap) }
	esc := template.HTMLEscapeString
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="pipeline-graph" viewBox="0 0 %.0f %.0f" width="%.0f" role="group" aria-labelledby="graph-title graph-desc" xmlns="http://www.w3.org/2000/svg">`, w, h, w)
	sb.WriteString(`<title id="graph-title">Pipeline steps</title>`)
	sb.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>`)
	// Edges first, so that boxes lie over their ends. An edge curves
	// across each gap between columns and runs straight through its slot
	// in each column it skips.
	for _, e := range edges {
		var d strings.Builder
		px, py := x(e.from)+boxW, y(e.from)+boxH/2
		fmt.Fprintf(&d, "M%.1f,%.1f", px, py)
		for _, b := range append(append([]*graphBox{}, e.via...), e.to) {
			nx, ny := x(b), y(b)+boxH/2
			mid := (px + nx) / 2
			fmt.Fprintf(&d, " C%.1f,%.1f %.1f,%.1f %.1f,%.1f", mid, py, mid, ny, nx, ny)
			px, py = nx, ny
			if b.step == nil {
				px += boxW
				fmt.Fprintf(&d, " L%.1f,%.1f", px, py)
			}
		}
		from, to := e.from.step.Name, e.to.step.Name
		fmt.Fprintf(&sb, `<path class="edge" data-from="%s" data-to="%s" d="%s" marker-end="url(#arrow)"><title>%s → %s</title></path>`,
			esc(from), esc(to), d.String(), esc(from), esc(to))
	}
	var summary []string
	for _, s := range steps {
		b := boxes[s.Name]
		if b == nil || b.step != s {
			continue
		}
		status := s.Status
		if status == "" {
			status = job.JobNotStarted
		}
		label := status
		if types[s.Name] == job.JobTypeParallel {
			label += " · parallel"
		}
		summary = append(summary, s.Name+" "+label)
		tip := s.Name + ": " + label
		if s.Reason != "" {
			tip += " (" + s.Reason + ")"
		}
		open, end := fmt.Sprintf(`<g class="node %s" data-step="%s">`, stepClass(status), esc(s.Name)), `</g>`
		if s.Job != "" {
			open = fmt.Sprintf(`<a class="node %s" data-step="%s" href="/jobs/%s" aria-label="%s">`,
				stepClass(status), esc(s.Name), esc(url.PathEscape(s.Job)), esc("step "+tip+", job "+s.Job))
			end = `</a>`
		}
		sb.WriteString(open)
		fmt.Fprintf(&sb, `<title>%s</title><rect x="%.1f" y="%.1f" width="%.0f" height="%.0f" rx="6"/>`, esc(tip), x(b), y(b), boxW, boxH)
		fmt.Fprintf(&sb, `<text class="name" x="%.1f" y="%.1f">%s</text><text class="status" x="%.1f" y="%.1f">%s</text>`,
			x(b)+10, y(b)+20, esc(clip(s.Name, boxLabelRunes)), x(b)+10, y(b)+38, esc(label))
		sb.WriteString(end)
	}
	desc := "No steps."
	if len(summary) > 0 {
		desc = fmt.Sprintf("%d steps in %d levels, %d dependencies: %s.", len(summary), levels, len(edges), strings.Join(summary, ", "))
	}
	fmt.Fprintf(&sb, `<desc id="graph-desc">%s</desc></svg>`, esc(desc))
	return template.HTML(sb.String())
}

// clip shortens s to n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
