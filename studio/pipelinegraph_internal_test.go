package studio

import (
	"regexp"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
)

// A step's level is one more than the deepest step it reads from: a
// diamond puts its join one past its longest branch; a dependency on a
// step the list lacks adds nothing; a cycle in a damaged document is cut
// rather than looping.
func TestStepLevels(t *testing.T) {
	steps := []*job.PipelineStepStatus{
		{Name: "prep"},
		{Name: "long1", DependsOn: []string{"prep"}},
		{Name: "long2", DependsOn: []string{"long1"}},
		{Name: "short", DependsOn: []string{"prep"}},
		{Name: "join", DependsOn: []string{"short", "long2"}},
		{Name: "alone", DependsOn: []string{"not-a-step"}},
	}
	want := map[string]int{"prep": 0, "long1": 1, "long2": 2, "short": 1, "join": 3, "alone": 0}
	got := stepLevels(steps)
	for name, l := range want {
		if got[name] != l {
			t.Errorf("level of %s: %d, want %d", name, got[name], l)
		}
	}
	cyc := stepLevels([]*job.PipelineStepStatus{{Name: "a", DependsOn: []string{"b"}}, {Name: "b", DependsOn: []string{"a"}}})
	if len(cyc) != 2 {
		t.Errorf("a cycle's levels: %v", cyc)
	}
}

// Within a level, a step sits near the steps it reads from: the step
// reading the second first-level step comes second even when stored
// first.
func TestLayoutStepsOrdersByParents(t *testing.T) {
	boxes, _, levels, rows := layoutSteps([]*job.PipelineStepStatus{
		{Name: "a"}, {Name: "b"},
		{Name: "from-b", DependsOn: []string{"b"}}, {Name: "from-a", DependsOn: []string{"a"}},
	})
	if levels != 2 || rows != 2 {
		t.Fatalf("%d levels, %d rows, want 2 and 2", levels, rows)
	}
	if boxes["from-a"].row != 0 || boxes["from-b"].row != 1 {
		t.Errorf("rows: from-a %d, from-b %d, want 0 and 1", boxes["from-a"].row, boxes["from-b"].row)
	}
}

// An edge that skips a column passes through a slot of its own there,
// not under the box of the step in between: prep → train beside
// prep → feat → train takes the second row of feat's column.
func TestLayoutStepsLongEdges(t *testing.T) {
	boxes, edges, levels, rows := layoutSteps([]*job.PipelineStepStatus{
		{Name: "prep"}, {Name: "feat", DependsOn: []string{"prep"}},
		{Name: "train", DependsOn: []string{"prep", "feat", "prep"}},
	})
	if levels != 3 || rows != 2 || len(edges) != 3 {
		t.Fatalf("%d levels, %d rows, %d edges, want 3, 2 and 3", levels, rows, len(edges))
	}
	var long *graphEdge
	for _, e := range edges {
		if e.from.step.Name == "prep" && e.to.step.Name == "train" {
			long = e
		} else if len(e.via) != 0 {
			t.Errorf("%s → %s passes through %d slots, want none", e.from.step.Name, e.to.step.Name, len(e.via))
		}
	}
	if long == nil || len(long.via) != 1 {
		t.Fatalf("prep → train: %+v, want one slot", long)
	}
	if v := long.via[0]; v.level != 1 || v.row == boxes["feat"].row {
		t.Errorf("prep → train's slot at level %d row %d, feat at row %d", v.level, v.row, boxes["feat"].row)
	}
	svg := string(pipelineGraph([]*job.PipelineStepStatus{
		{Name: "prep"}, {Name: "feat", DependsOn: []string{"prep"}}, {Name: "train", DependsOn: []string{"prep", "feat"}},
	}, nil))
	// prep's right side, a curve to the slot in row 1, straight across
	// it, a curve to train's left side.
	want := `data-from="prep" data-to="train" d="M180.0,36.0 C208.0,36.0 208.0,104.0 236.0,104.0 L404.0,104.0 C432.0,104.0 432.0,36.0 460.0,36.0"`
	if !strings.Contains(svg, want) {
		t.Errorf("the long edge: %s not in\n%s", want, svg)
	}
}

// The graph has a box per step at its level's column and an arrow per
// dependency (a dependency written twice draws once); a box links to its
// step's child job, path-escaped, once there is one and is coloured by
// status; a step not submitted has no link; a hostile name is text
// everywhere, never markup.
func TestPipelineGraph(t *testing.T) {
	hostile := `<script>alert("x")</script>`
	svg := string(pipelineGraph([]*job.PipelineStepStatus{
		{Name: "prep", Job: "p-prep", Status: job.JobCompleted},
		{Name: "train", Job: "p-train", Status: job.JobRunning, DependsOn: []string{"prep", "prep"}},
		{Name: hostile, Job: "p-" + hostile, Status: job.JobFailed, DependsOn: []string{"prep"}, Reason: "exit 1 <b>"},
		{Name: "score", Status: job.JobNotStarted, DependsOn: []string{"train", hostile}, Reason: "waits for train"},
	}, map[string]string{"train": "command", "score": job.JobTypeParallel}))
	if n := strings.Count(svg, `class="node `); n != 4 {
		t.Errorf("%d nodes, want 4:\n%s", n, svg)
	}
	// A parallel step says so under its status; a command step does not.
	if !strings.Contains(svg, `<text class="status" x="470.0" y="50.0">NotStarted · parallel</text>`) || strings.Count(svg, "· parallel") != 3 {
		t.Errorf("the parallel step is not marked (its box, title and summary):\n%s", svg)
	}
	if n := strings.Count(svg, `class="edge"`); n != 4 {
		t.Errorf("%d edges, want 4 (prep→train, prep→hostile, train→score, hostile→score):\n%s", n, svg)
	}
	for what, want := range map[string]string{
		"prep, a completed link":  `<a class="node st-completed" data-step="prep" href="/jobs/p-prep"`,
		"train, a running link":   `<a class="node st-running" data-step="train" href="/jobs/p-train"`,
		"score, not started":      `<g class="node st-notstarted" data-step="score">`,
		"prep in column 0":        `<rect x="12.0" y="12.0"`,
		"score in column 2":       `<rect x="460.0"`,
		"the hostile job's link":  `href="/jobs/p-%3Cscript%3Ealert%28%22x%22%29%3C%2Fscript%3E"`,
		"the hostile step's data": `data-step="&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"`,
		"an edge to score":        `data-from="train" data-to="score"`,
		"the description":         `4 steps in 3 levels, 4 dependencies: prep Completed, train Running`,
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("%s: %s not in\n%s", what, want, svg)
		}
	}
	if strings.Contains(svg, "<script") || strings.Contains(svg, "<b>") {
		t.Errorf("markup from names or reasons is not escaped:\n%s", svg)
	}
	if strings.Contains(svg, `data-step="score" href`) {
		t.Error("a step with no job links somewhere")
	}
	// Long names are clipped in the box, whole in its title.
	long := strings.Repeat("n", 40)
	svg = string(pipelineGraph([]*job.PipelineStepStatus{{Name: long, Status: job.JobQueued}}, nil))
	if !strings.Contains(svg, ">"+strings.Repeat("n", 19)+"…</text>") || !strings.Contains(svg, "<title>"+long+": Queued</title>") {
		t.Errorf("a long name:\n%s", svg)
	}
	if svg := string(pipelineGraph(nil, nil)); !strings.Contains(svg, "No steps.") {
		t.Errorf("no steps: %s", svg)
	}
}

// Every status has its colour class; the ones in between share their
// neighbours'.
func TestStepClass(t *testing.T) {
	for status, want := range map[string]string{
		job.JobCompleted: "st-completed", job.JobRunning: "st-running", job.JobPreparing: "st-running",
		job.JobQueued: "st-queued", job.JobFailed: "st-failed", job.JobCanceled: "st-canceled",
		job.JobCancelRequested: "st-canceled", job.JobNotStarted: "st-notstarted", "": "st-notstarted",
	} {
		if got := stepClass(status); got != want {
			t.Errorf("stepClass(%q) = %s, want %s", status, got, want)
		}
	}
}

// The sweep chart draws a point per trial that logged a value, in trial
// order, higher values higher; the best is ringed, early-stopped trials
// are crosses; a trial with no value has no point; the description says
// the range, the best and the early stops; a metric name with markup is
// escaped.
func TestSweepChart(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	trials := []*job.SweepTrialStatus{
		{Index: 0, Job: "s-trial-0", Status: job.JobCompleted, Metric: f(0.5)},
		{Index: 1, Job: "s-trial-1", Status: job.JobCompleted, Metric: f(0.9)},
		{Index: 2, Job: "s-trial-2", Status: job.JobCanceled, Metric: f(0.1), EarlyTerminated: "BanditSlack"},
		{Index: 3, Job: "s-trial-3", Status: job.JobRunning},
	}
	svg := string(sweepChart(trials, "s-trial-1", "<i>acc</i>", "maximize"))
	if n := len(regexp.MustCompile(`<g class="pt[^"]*" data-trial=`).FindAllString(svg, -1)); n != 3 {
		t.Errorf("%d points, want 3:\n%s", n, svg)
	}
	for what, want := range map[string]string{
		"the best, ringed":       `<g class="pt best" data-trial="1"><title>trial 1: &lt;i&gt;acc&lt;/i&gt; 0.9, best</title><circle class="ring" cx="302.0" cy="10.0"`,
		"the early one, crossed": `<g class="pt early" data-trial="2"><title>trial 2: &lt;i&gt;acc&lt;/i&gt; 0.1, stopped early (BanditSlack)</title><path class="cross"`,
		"the lowest at bottom":   `d="M462.0,174.0`,
		"trial 3's slot":         `text-anchor="middle">3</text>`,
		"the description":        `4 trials, 3 with a value of &lt;i&gt;acc&lt;/i&gt; (maximize), between 0.1 and 0.9; best 0.9 by trial 1 (job s-trial-1). Stopped early: trials 2.`,
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("%s: %s not in\n%s", what, want, svg)
		}
	}
	if strings.Contains(svg, "<i>") {
		t.Errorf("the metric name is not escaped:\n%s", svg)
	}
	if svg := string(sweepChart(nil, "", "loss", "minimize")); !strings.Contains(svg, "No trials yet.") || strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
		t.Errorf("no trials: %s", svg)
	}
	if svg := string(sweepChart(trials[3:], "", "loss", "minimize")); !strings.Contains(svg, "1 trials, none has logged loss yet.") || strings.Contains(svg, "NaN") {
		t.Errorf("no values: %s", svg)
	}
}
