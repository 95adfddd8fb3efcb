// Package sweeps runs sweep jobs: each pass reads every active sweep's
// trials' child jobs and the primary metric each logged, cancels the
// trials its early termination policy stops, starts new trials (their
// hyperparameters from the sweep package's sampler) up to
// max_concurrent_trials and max_total_trials, and ends the sweep with its
// best trial when no trial runs or will. A trial is a command job like
// any other: the scheduler and the autoscaler place it, and a preempted
// one is requeued as any job on low-priority nodes is.
//
// What it decided is in the sweep's document: a trial's parameters are
// recorded before its child job is submitted (the child's name derives
// from the sweep's and the trial's index: shoal.SweepChildName), so a
// pass that died between the two submits the same trial again.
package sweeps

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/control/pipelines"
	"github.com/shoal-ml/shoal/decide/sweep"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/store"
)

// Services is what the loop asks of the request services.
// *service.Services implements it.
type Services interface {
	loop.Base
	// SubmitChildJob submits a trial as a command job of the parent's
	// submitter (named by the caller; idempotent by name).
	SubmitChildJob(ctx context.Context, parent *job.Job, spec *job.JobSpec) (*job.Job, error)
	// CancelJob cancels a job.
	CancelJob(ctx context.Context, workspace, name string) (*job.Job, error)
}

// Loop advances sweep jobs.
type Loop struct {
	s Services
	// backoff holds the sweeps whose passes failed (see
	// pipelines.RunParents).
	backoff *loop.Backoff
}

// New returns the loop over s.
func New(s Services) *Loop { return &Loop{s: s, backoff: loop.NewBackoff(pipelines.GiveUpAfter)} }

// RunOnce advances every active sweep once. A sweep whose pass fails is
// that sweep's failure (pipelines.RunParents): the pass goes on with the
// others, and only failing to list them fails it.
func (l *Loop) RunOnce(ctx context.Context, now time.Time) error {
	parents, err := pipelines.ActiveParents(ctx, l.s.Store(), func(j *job.Job) bool { return j.Sweep != nil })
	if err != nil {
		return err
	}
	pipelines.RunParents(ctx, now, l.s, l.backoff, "sweep", parents,
		func(p *job.Job) error { return l.advance(ctx, now, p) }, trialJobs)
	return nil
}

// trialJobs lists the child jobs of sweep p's trials.
func trialJobs(p *job.Job) []string {
	var out []string
	for _, t := range p.Trials {
		if t.Job != "" {
			out = append(out, t.Job)
		}
	}
	return out
}

// advance runs one pass over sweep p.
func (l *Loop) advance(ctx context.Context, now time.Time, p *job.Job) error {
	spec := p.Sweep
	goal, metric := spec.Objective.Goal, spec.Objective.PrimaryMetric
	trials := p.Trials
	if p.Status == job.JobCancelRequested {
		// A cancel needs the trials' states alone: what they logged
		// cannot keep it from being carried out.
		metric = ""
	}
	values, err := l.read(ctx, p, trials, metric)
	if err != nil {
		return err
	}
	active := 0
	for _, t := range trials {
		// A trial recorded and not yet submitted (a pass ended between
		// the two) counts: it is submitted below.
		if (t.Status != job.JobNotStarted && !job.JobTerminal(t.Status)) || (t.Status == job.JobNotStarted && t.Reason == "") {
			active++
		}
	}

	// Stopping: asked to, or out of time. Nothing new starts; what runs
	// is canceled; the sweep ends when nothing runs.
	stop := ""
	switch {
	case p.Status == job.JobCancelRequested:
		stop = "canceled"
	case spec.Limits.Timeout > 0 && p.StartTime != nil && now.Sub(*p.StartTime) >= time.Duration(spec.Limits.Timeout)*time.Second:
		stop = fmt.Sprintf("limits.timeout of %ds reached", spec.Limits.Timeout)
	}
	if stop != "" {
		var errs []error
		for _, t := range trials {
			if t.Status == job.JobNotStarted && t.Reason == "" {
				// Recorded, never submitted (a pass ended between the
				// two): it will not be now.
				t.Reason = "will not run: " + stop
				active--
				continue
			}
			if t.Status != job.JobNotStarted && !job.JobTerminal(t.Status) && t.Status != job.JobCancelRequested {
				// One trial that cannot be canceled does not hold up the
				// others; its error is the pass's.
				c, err := l.s.CancelJob(ctx, p.Workspace, t.Job)
				switch {
				case core.ErrorCode(err) == core.ENOTFOUND:
					t.Status = job.JobCanceled
				case err != nil:
					errs = append(errs, loop.Context(err, "canceling trial %s", t.Job))
					continue
				default:
					t.Status = c.Status
				}
				t.Reason = stop
				if job.JobTerminal(t.Status) {
					// A queued trial ends at once: the sweep need not
					// wait a pass for it.
					active--
				}
			}
		}
		if len(errs) > 0 {
			if err := l.save(ctx, p, trials, stop+": waiting for its running trials to end"); err != nil {
				errs = append(errs, err)
			}
			return errors.Join(errs...)
		}
		if active == 0 {
			status := job.JobCanceled
			if p.Status != job.JobCancelRequested && anyCompleted(trials) {
				status = job.JobCompleted
			}
			return l.finish(ctx, now, p, trials, status, stop)
		}
		return l.save(ctx, p, trials, stop+": waiting for its running trials to end")
	}

	// Early termination judges the trials on what they logged so far.
	if et := spec.EarlyTermination; et != nil {
		for _, c := range sweep.Evaluate(et, goal, decisionTrials(trials, values)) {
			t := byJob(trials, c.TrialID)
			if t == nil || job.JobTerminal(t.Status) || t.Status == job.JobCancelRequested || t.EarlyTerminated != "" {
				continue
			}
			if _, err := l.s.CancelJob(ctx, p.Workspace, t.Job); err != nil {
				return loop.Context(err, "canceling trial %s, which %s stopped", t.Job, et.Type)
			}
			t.EarlyTerminated, t.Reason = string(c.Reason), c.Message
		}
	}

	// New trials, max_concurrent_trials at a time: each recorded before
	// its child is submitted.
	sampler, err := sweep.New(spec, p.SweepSeed)
	if err != nil {
		return l.finish(ctx, now, p, trials, job.JobFailed, "its sampler: "+err.Error())
	}
	exhausted := false
	for active < spec.Limits.MaxConcurrentTrials && len(trials) < spec.Limits.MaxTotalTrials {
		params, ok := sampler.Next(decisionTrials(trials, values))
		if !ok {
			exhausted = true
			break
		}
		t := &job.SweepTrialStatus{Index: len(trials), Job: job.SweepChildName(p.Name, len(trials)), Parameters: params, Status: job.JobNotStarted}
		trials = append(trials, t)
		active++
	}
	if err := l.save(ctx, p, trials, ""); err != nil {
		return err
	}
	for _, t := range trials {
		if t.Status != job.JobNotStarted || t.Reason != "" {
			continue
		}
		js, err := sweepjob.TrialJobSpec(spec, sweep.Params(t.Parameters).Render())
		if err == nil {
			js.Name, js.DisplayName = t.Job, fmt.Sprintf("%s trial %d", p.Name, t.Index)
			if js.ExperimentName == "" {
				js.ExperimentName = p.Name
			}
			if spec.Limits.TrialTimeout > 0 {
				js.Limits = &job.JobLimits{Timeout: spec.Limits.TrialTimeout}
			}
			var child *job.Job
			if child, err = l.s.SubmitChildJob(ctx, p, js); err == nil {
				t.Status = child.Status
				continue
			}
		}
		t.Status, t.Reason = job.JobFailed, "could not be submitted: "+err.Error()
		active--
	}
	if len(trials) >= spec.Limits.MaxTotalTrials {
		exhausted = true
	}
	if exhausted && active == 0 {
		status, reason := job.JobCompleted, fmt.Sprintf("%d trials ran", len(trials))
		if !anyCompleted(trials) {
			status, reason = job.JobFailed, fmt.Sprintf("none of its %d trials completed", len(trials))
		}
		return l.finish(ctx, now, p, trials, status, reason)
	}
	return l.save(ctx, p, trials, fmt.Sprintf("%d of %d trials started, %d running or queued", len(trials), spec.Limits.MaxTotalTrials, active))
}

// read refreshes each trial from its child job and the primary metric
// it logged (none when metric is ""), and returns every value of that
// metric by trial job.
func (l *Loop) read(ctx context.Context, p *job.Job, trials []*job.SweepTrialStatus, metric string) (map[string][]float64, error) {
	values := map[string][]float64{}
	err := l.s.Store().View(ctx, func(tx store.Tx) error {
		for _, t := range trials {
			child, err := tx.GetJob(p.Workspace, t.Job)
			if core.ErrorCode(err) == core.ENOTFOUND {
				continue
			} else if err != nil {
				return err
			}
			if child.ParentJobName != p.Name {
				// A job of the trial's name that is not this sweep's
				// (made before it, by anyone): its status, metrics and
				// outputs are never the trial's.
				t.Status, t.Metric, t.Intervals = job.JobFailed, nil, 0
				t.Reason = fmt.Sprintf("could not be submitted: job %q already exists and is not a child of %s", child.Name, p.Name)
				continue
			}
			t.Status = child.Status
			if child.Status == job.JobFailed && child.Error != "" && t.Reason == "" {
				t.Reason = child.Error
			}
			if metric == "" {
				continue
			}
			pts, err := tx.ListMetricHistory(p.Workspace, t.Job, metric)
			if err != nil {
				return err
			}
			if vs := intervalValues(pts); len(vs) > 0 {
				v := vs[len(vs)-1]
				t.Metric, t.Intervals = &v, len(vs)
				values[t.Job] = vs
			}
		}
		return nil
	})
	return values, err
}

// intervalValues are a trial's values of its primary metric, one per
// interval, from its points in step then timestamp order. A trial that
// logs with steps (mlflow.log_metric(k, v, step=epoch)) has one interval
// per step, the value logged last for it: a trial requeued after a
// preemption restarts and logs its steps again, and counting both
// attempts' points would judge it at an interval it has not reached
// against the others' (its best by "interval 4" its step 2). A trial that
// logs without a step (MLflow's client sends step 0) has one interval
// per point, in the order logged; a restart of such a trial cannot be
// told apart from more intervals, as the points do not say which attempt
// logged them.
func intervalValues(pts []mlflowrun.MetricPoint) []float64 {
	if len(pts) == 0 {
		return nil
	}
	if pts[0].Step == pts[len(pts)-1].Step {
		out := make([]float64, len(pts))
		for i, p := range pts {
			out[i] = p.Value
		}
		return out
	}
	var out []float64
	for i, p := range pts {
		if i > 0 && p.Step == pts[i-1].Step {
			out[len(out)-1] = p.Value
			continue
		}
		out = append(out, p.Value)
	}
	return out
}

// decisionTrials are the trials as the sweep package judges them, with
// every value of their primary metric (the sampler and the policy need
// every interval; the document keeps the last).
func decisionTrials(trials []*job.SweepTrialStatus, values map[string][]float64) []sweep.Trial {
	out := make([]sweep.Trial, 0, len(trials))
	for _, t := range trials {
		st := sweep.Running
		switch {
		case t.Status == job.JobCompleted:
			st = sweep.Completed
		case job.JobTerminal(t.Status):
			st = sweep.Ended
		}
		out = append(out, sweep.Trial{ID: t.Job, Params: t.Parameters, State: st, Metrics: values[t.Job]})
	}
	return out
}

func anyCompleted(trials []*job.SweepTrialStatus) bool {
	for _, t := range trials {
		if t.Status == job.JobCompleted {
			return true
		}
	}
	return false
}

func byJob(trials []*job.SweepTrialStatus, job string) *job.SweepTrialStatus {
	for _, t := range trials {
		if t.Job == job {
			return t
		}
	}
	return nil
}

// save writes the trials and the reason back to the sweep, keeping a
// cancel asked for since it was read.
func (l *Loop) save(ctx context.Context, p *job.Job, trials []*job.SweepTrialStatus, reason string) error {
	return l.write(ctx, p, trials, func(j *job.Job) {
		if j.Status == job.JobRunning && reason != "" {
			j.StatusReason = reason
		}
	})
}

// finish ends the sweep with status and its best trial.
func (l *Loop) finish(ctx context.Context, now time.Time, p *job.Job, trials []*job.SweepTrialStatus, status, reason string) error {
	return l.write(ctx, p, trials, func(j *job.Job) {
		j.Status, j.StatusReason, j.EndTime = status, reason, &now
		if status == job.JobFailed {
			j.Error = reason
		}
		j.BestChildRunID = ""
		if j.Sweep == nil || j.Sweep.Objective == nil {
			return
		}
		values := map[string][]float64{}
		for _, t := range trials {
			if t.Metric != nil {
				values[t.Job] = []float64{*t.Metric}
			}
		}
		if i := sweep.Best(j.Sweep.Objective.Goal, decisionTrials(trials, values)); i >= 0 {
			j.BestChildRunID = trials[i].Job
			j.StatusReason += fmt.Sprintf("; best trial %s: %s %g", trials[i].Job, j.Sweep.Objective.PrimaryMetric, *trials[i].Metric)
		}
	})
}

// write stores the trials and applies change to the sweep.
func (l *Loop) write(ctx context.Context, p *job.Job, trials []*job.SweepTrialStatus, change func(*job.Job)) error {
	err := l.s.Store().Update(ctx, func(tx store.Tx) error {
		j, err := tx.GetJob(p.Workspace, p.Name)
		if err != nil {
			return err
		}
		if job.JobTerminal(j.Status) {
			return nil
		}
		j.Trials = trials
		change(j)
		j.Version++
		return pipelines.UpdateParent(tx, j)
	})
	if err == nil {
		p.Trials = trials
	}
	return err
}
