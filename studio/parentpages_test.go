package studio_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
)

// insertJobs writes jobs to the store as the control loops leave them,
// without submitting them: the pages read what is stored.
func insertJobs(t *testing.T, svc *service.Services, jobs ...*job.Job) {
	t.Helper()
	if err := svc.Store().Update(context.Background(), func(tx store.Tx) error {
		for i, j := range jobs {
			j.Workspace, j.Version, j.Seq = core.DefaultWorkspace, 1, int64(i+1)
			if err := tx.InsertJob(j); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A pipeline's page draws its graph (a box per step, an arrow per
// dependency, a box linking to its step's child job) and lists its steps
// with their status, job and reason; a step name that is markup stays
// text; a parent has no log, attempts or compute of its own. A step's
// child job's page links back to the pipeline.
func TestPipelinePage(t *testing.T) {
	ts, token, svc := newServerWithServices(t)
	hostile := `<script>alert(1)</script>`
	pipe := &job.Job{JobSpec: job.JobSpec{Name: "pipe", Type: job.JobTypePipeline}, Status: job.JobRunning,
		Pipeline: &job.PipelineSpec{Name: "pipe", Type: job.JobTypePipeline},
		Steps: []*job.PipelineStepStatus{
			{Name: "prep", Job: "pipe-prep", Status: job.JobCompleted},
			{Name: "train", Job: "pipe-train", Status: job.JobRunning, DependsOn: []string{"prep"}},
			{Name: hostile, Job: "pipe-" + hostile, Status: job.JobFailed, DependsOn: []string{"prep"}, Reason: "exit code 1"},
			{Name: "score", Status: job.JobNotStarted, DependsOn: []string{"train", hostile}, Reason: "waits for train"},
		}}
	child := &job.Job{JobSpec: job.JobSpec{Name: "pipe-prep", Type: "command", Command: "python prep.py", Compute: "cpu"},
		Status: job.JobCompleted, ParentJobName: "pipe"}
	insertJobs(t, svc, pipe, child)

	code, body := page(t, ts, "/jobs/pipe", token)
	if code != http.StatusOK {
		t.Fatalf("pipeline page: %d\n%s", code, body)
	}
	if n := strings.Count(body, `class="node `); n != 4 {
		t.Errorf("%d step boxes, want 4", n)
	}
	if n := strings.Count(body, `class="edge"`); n != 4 {
		t.Errorf("%d edges, want 4", n)
	}
	for what, want := range map[string]string{
		"the graph":                `<svg class="pipeline-graph"`,
		"prep's box, linked":       `<a class="node st-completed" data-step="prep" href="/jobs/pipe-prep"`,
		"score's box, not linked":  `<g class="node st-notstarted" data-step="score">`,
		"train's row":              `<tr><td>train</td><td></td><td><span class="badge ok">Running</span></td><td><a href="/jobs/pipe-train">pipe-train</a></td><td>prep</td><td></td></tr>`,
		"score's row, its reason":  `<tr><td>score</td><td></td><td><span class="badge busy">NotStarted</span></td><td></td><td>train, &lt;script&gt;alert(1)&lt;/script&gt;</td><td>waits for train</td></tr>`,
		"the hostile step's link":  `<a href="/jobs/pipe-%3Cscript%3Ealert%281%29%3C%2Fscript%3E">pipe-&lt;script&gt;alert(1)&lt;/script&gt;</a>`,
		"the type":                 `<dt>Type</dt><dd>pipeline</dd>`,
		"the legend's not started": `<span class="swatch st-notstarted"></span>NotStarted`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the pipeline page has no %s (%q)", what, want)
		}
	}
	if strings.Contains(body, "<script>alert") {
		t.Error("a step name reaches the page as markup")
	}
	for _, absent := range []string{`id="h-logs"`, `id="h-attempts"`, `<dt>Compute</dt>`, `id="h-trials"`} {
		if strings.Contains(body, absent) {
			t.Errorf("the pipeline page has %s", absent)
		}
	}

	code, body = page(t, ts, "/jobs/pipe-prep", token)
	if code != http.StatusOK {
		t.Fatalf("step page: %d\n%s", code, body)
	}
	if !strings.Contains(body, `<dt>Parent</dt><dd><a id="parent" href="/jobs/pipe">pipe</a></dd>`) {
		t.Errorf("the step's page does not link its pipeline:\n%s", body)
	}
	for _, want := range []string{`id="h-logs"`, `id="h-attempts"`, `<dt>Compute</dt>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the step's page (a command job) lacks %s", want)
		}
	}
	if strings.Contains(body, `id="h-steps"`) {
		t.Error("a command job's page has a steps section")
	}
}

// A sweep's page lists its trials (index, job, status, parameters,
// primary metric, early termination, best) and charts the metric per
// trial with the best and the early-stopped marked; its objective and
// best trial are in its details; a trial's page links back to the sweep.
func TestSweepPage(t *testing.T) {
	ts, token, svc := newServerWithServices(t)
	f := func(v float64) *float64 { return &v }
	sweep := &job.Job{JobSpec: job.JobSpec{Name: "sw", Type: job.JobTypeSweep}, Status: job.JobRunning,
		Sweep: &job.SweepSpec{Name: "sw", Type: job.JobTypeSweep, Objective: &job.Objective{PrimaryMetric: "accuracy", Goal: "maximize"}},
		Trials: []*job.SweepTrialStatus{
			{Index: 0, Job: "sw-trial-0", Status: job.JobCompleted, Metric: f(0.75), Intervals: 3,
				Parameters: map[string]any{"lr": 0.01, "kernel": "rbf"}},
			{Index: 1, Job: "sw-trial-1", Status: job.JobCompleted, Metric: f(0.875), Intervals: 3,
				Parameters: map[string]any{"lr": 0.1, "kernel": "<b>linear</b>"}},
			{Index: 2, Job: "sw-trial-2", Status: job.JobCanceled, Metric: f(0.25), Intervals: 2,
				Parameters: map[string]any{"lr": 1e-05, "kernel": "poly"}, EarlyTerminated: "BanditSlack",
				Reason: "bandit: 0.25 at interval 2 is outside slack_factor 0.1 of the best 0.8"},
			{Index: 3, Job: "sw-trial-3", Status: job.JobRunning, Parameters: map[string]any{"lr": 0.5, "kernel": "rbf"}},
		},
		BestChildRunID: "sw-trial-1"}
	trial := &job.Job{JobSpec: job.JobSpec{Name: "sw-trial-1", Type: "command", Command: "python train.py --lr 0.1", Compute: "cpu"},
		Status: job.JobCompleted, ParentJobName: "sw"}
	insertJobs(t, svc, sweep, trial)

	code, body := page(t, ts, "/jobs/sw", token)
	if code != http.StatusOK {
		t.Fatalf("sweep page: %d\n%s", code, body)
	}
	for what, want := range map[string]string{
		"the objective":         `<dt>Objective</dt><dd>maximize accuracy</dd>`,
		"the best trial":        `<a id="best" href="/jobs/sw-trial-1">sw-trial-1</a>`,
		"the chart":             `<svg class="chart sweep"`,
		"the best point":        `<g class="pt best" data-trial="1">`,
		"the early point":       `<g class="pt early" data-trial="2">`,
		"the metric's column":   `<th scope="col">accuracy</th>`,
		"trial 0's row":         `<tr><td>0</td><td><a href="/jobs/sw-trial-0">sw-trial-0</a></td><td><span class="badge ok">Completed</span></td><td><code>kernel=rbf, lr=0.01</code></td><td>0.75</td><td></td><td></td></tr>`,
		"trial 1's row, best":   `<tr class="best"><td>1</td><td><a href="/jobs/sw-trial-1">sw-trial-1</a></td><td><span class="badge ok">Completed</span></td><td><code>kernel=&lt;b&gt;linear&lt;/b&gt;, lr=0.1</code></td><td>0.875</td><td></td><td><strong>best</strong></td></tr>`,
		"trial 2's early stop":  `<td><code>kernel=poly, lr=1e-05</code></td><td>0.25</td><td>BanditSlack: bandit: 0.25 at interval 2 is outside slack_factor 0.1 of the best 0.8</td>`,
		"trial 3 with no value": `<td><code>kernel=rbf, lr=0.5</code></td><td></td><td></td><td></td></tr>`,
		"the type":              `<dt>Type</dt><dd>sweep</dd>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the sweep page has no %s (%q)", what, want)
		}
	}
	if n := len(regexp.MustCompile(`<g class="pt[^"]*" data-trial=`).FindAllString(body, -1)); n != 3 {
		t.Errorf("%d points in the chart, want 3 (trial 3 has no value)", n)
	}
	if strings.Contains(body, "<b>linear") {
		t.Error("a parameter value reaches the page as markup")
	}
	for _, absent := range []string{`id="h-logs"`, `id="h-attempts"`, `id="h-steps"`} {
		if strings.Contains(body, absent) {
			t.Errorf("the sweep page has %s", absent)
		}
	}

	code, body = page(t, ts, "/jobs/sw-trial-1", token)
	if code != http.StatusOK {
		t.Fatalf("trial page: %d\n%s", code, body)
	}
	if !strings.Contains(body, `<a id="parent" href="/jobs/sw">sw</a>`) {
		t.Errorf("the trial's page does not link its sweep:\n%s", body)
	}
}
