package studio_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/parallel"
	"github.com/shoal-ml/shoal/store"
)

// A parallel job's page shows where its mini-batches stand, from its
// ledger as `job show` reads it: done, failed, retried, in flight, left,
// failed items, the rate and the expected end; an aborted one says why
// (markup in the message stays text) and has no expected end; one whose
// input is not split yet says so. A pipeline's steps table names each
// step's type, and its graph marks a parallel step.
func TestParallelJobProgressPage(t *testing.T) {
	ts, token, svc := newServerWithServices(t)
	spec := func(name string) job.JobSpec {
		return job.JobSpec{Name: name, Type: "command", Command: job.ParallelCommand(""), Compute: "cpu",
			Parallel: &job.ParallelSpec{EntryScript: "score.py", InputData: "${{inputs.input_data}}"}}
	}
	pipe := &job.Job{JobSpec: job.JobSpec{Name: "pipe", Type: job.JobTypePipeline}, Status: job.JobRunning,
		Pipeline: &job.PipelineSpec{Name: "pipe", Type: job.JobTypePipeline, Jobs: map[string]*job.PipelineStep{
			"prep": {Type: "command"}, "score": {Type: job.JobTypeParallel}}},
		Steps: []*job.PipelineStepStatus{
			{Name: "prep", Job: "pipe-prep", Status: job.JobCompleted},
			{Name: "score", Job: "scoring", Status: job.JobRunning, DependsOn: []string{"prep"}},
		}}
	insertJobs(t, svc, pipe,
		&job.Job{JobSpec: spec("scoring"), Status: job.JobRunning, ParentJobName: "pipe"},
		&job.Job{JobSpec: spec("stopped"), Status: job.JobFailed},
		&job.Job{JobSpec: spec("fresh"), Status: job.JobQueued})
	now := time.Now()
	hostile := `<script>alert("abort")</script>`
	if err := svc.Store().Update(context.Background(), func(tx store.Tx) error {
		for _, p := range []*parallel.Plan{
			{Workspace: core.DefaultWorkspace, Job: "scoring", Kind: "files", Items: 200, MiniBatches: 20, Fingerprint: "f", CreatedAt: now.Add(-time.Hour)},
			{Workspace: core.DefaultWorkspace, Job: "stopped", Kind: "files", Items: 10, MiniBatches: 10, Fingerprint: "f", CreatedAt: now.Add(-time.Hour), Aborted: hostile},
		} {
			if err := tx.InsertParallelPlan(p); err != nil {
				return err
			}
		}
		batch := func(jobName string, i int, state string, failedTries int, items []parallel.FailedItem, finished time.Time) *parallel.Batch {
			return &parallel.Batch{Workspace: core.DefaultWorkspace, Job: jobName, Index: i, State: state, FailedTries: failedTries, Items: 10,
				FailedItems: items, FinishedAt: finished, Deadline: now.Add(time.Hour)}
		}
		list := []*parallel.Batch{
			batch("scoring", 5, parallel.BatchFailed, 3, []parallel.FailedItem{{Item: "a.csv", Error: "boom"}, {Item: "b.csv", Error: "boom"}}, now.Add(-time.Minute)),
			batch("scoring", 6, parallel.BatchLeased, 1, nil, time.Time{}),
			batch("scoring", 7, parallel.BatchPending, 2, nil, time.Time{}),
			batch("stopped", 0, parallel.BatchFailed, 1, []parallel.FailedItem{{Item: "x", Error: "bad"}}, now.Add(-time.Minute)),
		}
		for i := range 5 {
			list = append(list, batch("scoring", i, parallel.BatchDone, 0, nil, now.Add(-time.Minute)))
		}
		for _, b := range list {
			if err := tx.PutParallelBatch(b); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// Retried: 3+1+2 failed tries, less the failed mini-batch's last
	// (not given again).
	code, body := page(t, ts, "/jobs/scoring", token)
	if code != http.StatusOK {
		t.Fatalf("parallel job page: %d %s", code, body)
	}
	for _, want := range []string{"<dt>Mini-batches</dt><dd>20 (200 items)</dd>", "<dt>Done</dt><dd>5</dd>", "<dt>Failed</dt><dd>1</dd>",
		"<dt>Retried</dt><dd>5 tries</dd>", "<dt>In flight</dt><dd>1</dd>", "<dt>Left</dt><dd>14</dd>", "<dt>Failed items</dt><dd>2</dd>",
		"<dt>Rate</dt><dd>1 per minute</dd>", "<dt>Expected end</dt><dd><time datetime="} {
		if !strings.Contains(body, want) {
			t.Errorf("parallel job page misses %s", want)
		}
	}
	if strings.Contains(body, "Aborted:") {
		t.Error("a running job is shown aborted")
	}

	_, body = page(t, ts, "/jobs/stopped", token)
	if !strings.Contains(body, `Aborted: &lt;script&gt;alert(&#34;abort&#34;)&lt;/script&gt;`) || strings.Contains(body, hostile) {
		t.Errorf("the abort message is not shown escaped:\n%s", body)
	}
	if strings.Contains(body, "Expected end") {
		t.Error("an aborted job has an expected end")
	}
	if _, body = page(t, ts, "/jobs/fresh", token); !strings.Contains(body, "not split into mini-batches yet") {
		t.Error("a parallel job without a plan says nothing of its mini-batches")
	}

	_, body = page(t, ts, "/jobs/pipe", token)
	if !strings.Contains(body, `<td>score</td><td><span class="step-parallel">parallel</span></td>`) || !strings.Contains(body, "<td>prep</td><td>command</td>") {
		t.Errorf("the steps table does not name the steps' types:\n%s", body)
	}
	if !strings.Contains(body, ">Running · parallel</text>") {
		t.Error("the graph does not mark the parallel step")
	}
	if _, body = page(t, ts, "/jobs/pipe-prep", token); strings.Contains(body, "Mini-batches") {
		t.Error("a job that is not parallel shows mini-batches")
	}
}
