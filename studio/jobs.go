package studio

import (
	"bytes"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
)

func (s *Studio) jobsPage(q *req) error {
	if err := s.allow(q, identity.ActJobsRead); err != nil {
		return err
	}
	qs := q.r.URL.Query()
	f := job.JobFilter{Workspace: q.workspace, Compute: qs.Get("compute"), Limit: 200}
	if st := qs.Get("status"); st != "" {
		f.Statuses = strings.Split(st, ",")
	}
	jobs, err := s.cfg.Svc.ListJobs(q.ctx, f)
	if err != nil {
		return err
	}
	computes, err := s.cfg.Svc.ListComputes(q.ctx, compute.ComputeFilter{Workspace: q.workspace})
	if err != nil {
		return err
	}
	var names []string
	for _, c := range computes {
		names = append(names, c.Name)
	}
	return s.render(q, "jobs", "Jobs", "jobs", map[string]any{
		"Jobs": jobs, "Compute": f.Compute, "Status": qs.Get("status"), "Computes": names,
		"Statuses": []string{job.JobQueued, job.JobPreparing, job.JobRunning, job.JobFinalizing, job.JobCompleted, job.JobFailed, job.JobCanceled},
	})
}

func (s *Studio) jobPage(q *req) error {
	if err := s.allow(q, identity.ActJobsRead); err != nil {
		return err
	}
	j, err := s.cfg.Svc.FindJobWithCost(q.ctx, q.workspace, q.r.PathValue("name"))
	if err != nil {
		return err
	}
	attempts, err := s.cfg.Svc.ListAttempts(q.ctx, q.workspace, j.Name)
	if err != nil {
		return err
	}
	events, err := s.cfg.Svc.ListJobEvents(q.ctx, q.workspace, j.Name)
	if err != nil {
		return err
	}
	ranks := 1
	if j.Resources != nil && j.Resources.InstanceCount > 1 {
		ranks = j.Resources.InstanceCount
	}
	rank := 0
	if v := q.r.URL.Query().Get("rank"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n >= ranks {
			return core.FieldErrorf("rank", "must be one of the job's ranks, 0 to %d, got %q", ranks-1, v)
		}
		rank = n
	}
	terminal := job.JobTerminal(j.Status)
	text, cut := s.logTail(j, rank)
	var metrics *mlflowrun.JobMetrics
	var charts []template.HTML
	if s.cfg.Tracking != nil {
		if metrics, err = s.cfg.Tracking.JobMetrics(q.ctx, q.p, q.workspace, j.Name, true); err != nil {
			return err
		}
		for i, m := range metrics.Metrics {
			charts = append(charts, metricChart(i, m.Key, metrics.History[m.Key]))
		}
	}
	var graph, sweep template.HTML
	var trials []trialRow
	metric, goal := sweepObjective(j)
	if j.Pipeline != nil || len(j.Steps) > 0 {
		graph = pipelineGraph(j.Steps, stepTypes(j))
	}
	if j.Sweep != nil || len(j.Trials) > 0 {
		sweep = sweepChart(j.Trials, j.BestChildRunID, metric, goal)
		trials = trialRows(j)
	}
	return s.render(q, "job", j.Name, "jobs", map[string]any{
		"J": j, "Parent": j.IsParent(), "Graph": graph, "SweepChart": sweep, "Trials": trials,
		"PrimaryMetric": metric, "Goal": goal, "Attempts": attempts, "Events": events, "Ranks": ranks, "Rank": rank, "Terminal": terminal,
		"Metrics": metrics, "Charts": charts,
		"Log": text, "LogCut": cut, "Outputs": terminal && s.hasOutputs(j, rank),
		"CanCancel": s.can(q, identity.ActJobsCancel) && !terminal,
		"StepTypes": stepTypes(j), "Progress": j.ParallelProgress,
	})
}

// logTailBytes is how much of a log the job page renders: its end, which
// is what a reader looks for; the whole log is a link away.
const logTailBytes = 64 << 10

// logTail reads the end of a rank's log in the job's latest attempt, for
// the page to read without JavaScript; cut is how many bytes before it
// are not shown.
func (s *Studio) logTail(j *job.Job, rank int) (text string, cut int64) {
	files := s.cfg.Svc.Files()
	if files == nil || j.AttemptCount == 0 {
		return "", 0
	}
	f, err := files.OpenLog(j.Workspace, j.Name, j.AttemptCount, rank)
	if err != nil {
		return "", 0
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return "", 0
	}
	if size > logTailBytes {
		cut = size - logTailBytes
	}
	if _, err := f.Seek(cut, io.SeekStart); err != nil {
		return "", 0
	}
	b, _ := io.ReadAll(io.LimitReader(f, logTailBytes))
	if cut > 0 {
		// Start at a line, not inside one (or inside a UTF-8 sequence).
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
			cut += int64(i + 1)
		}
	}
	return string(b), cut
}

// hasOutputs reports whether some attempt of the job uploaded outputs for
// rank, as the API's outputs download looks for them.
func (s *Studio) hasOutputs(j *job.Job, rank int) bool {
	files := s.cfg.Svc.Files()
	if files == nil {
		return false
	}
	for att := j.AttemptCount; att >= 1; att-- {
		if files.HasOutputs(j.Workspace, j.Name, att, rank) {
			return true
		}
	}
	return false
}
