// Package pipelines runs pipeline jobs: each pass reads every active
// pipeline's steps' child jobs, passes the outputs of the steps that
// completed on to the steps that read them, submits the steps whose
// inputs are all ready as command jobs, cancels or skips what a failed
// step stops, and ends the pipeline when no step runs or will. It
// decides nothing about where or when a step runs: a step is a command
// job like any other, which the scheduler and the autoscaler place (so
// `shoal sim` replays a history with pipelines in it as its jobs).
//
// It keeps no state of its own: a step's child job has a name derived
// from the pipeline's and the step's (shoal.PipelineChildName), and
// submission is idempotent by name, so a pass that died between
// submitting a step and recording it submits it again and finds it.
package pipelines

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/store"
)

// Services is what the loop asks of the request services.
// *service.Services implements it.
type Services interface {
	loop.Base
	// SubmitChildJob submits a step as a command job of the parent's
	// submitter (named by the caller; idempotent by name).
	SubmitChildJob(ctx context.Context, parent *job.Job, spec *job.JobSpec) (*job.Job, error)
	// CancelJob cancels a job.
	CancelJob(ctx context.Context, workspace, name string) (*job.Job, error)
	// ChildOutputArtifact makes a completed child's output folder an
	// artifact of its own.
	ChildOutputArtifact(ctx context.Context, child *job.Job, output string) (string, error)
	// SubmitChildSweep submits a sweep step as a sweep job of the
	// parent's submitter (named by the caller; idempotent by name).
	SubmitChildSweep(ctx context.Context, parent *job.Job, spec *job.SweepSpec) (*job.Job, error)
}

// Loop advances pipeline jobs.
type Loop struct {
	s Services
	// backoff holds the pipelines whose passes failed (see RunParents).
	backoff *loop.Backoff
}

// New returns the loop over s.
func New(s Services) *Loop { return &Loop{s: s, backoff: loop.NewBackoff(GiveUpAfter)} }

// RunOnce advances every active pipeline once. A pipeline whose pass
// fails is that pipeline's failure (RunParents): the pass goes on with
// the others, and only failing to list them fails it.
func (l *Loop) RunOnce(ctx context.Context, now time.Time) error {
	parents, err := ActiveParents(ctx, l.s.Store(), func(j *job.Job) bool { return j.Pipeline != nil })
	if err != nil {
		return err
	}
	RunParents(ctx, now, l.s, l.backoff, "pipeline", parents,
		func(p *job.Job) error { return l.advance(ctx, now, p) }, stepJobs)
	return nil
}

// stepJobs lists the child jobs of pipeline p's steps.
func stepJobs(p *job.Job) []string {
	var out []string
	for _, st := range p.Steps {
		if st.Job != "" {
			out = append(out, st.Job)
		}
	}
	return out
}

// ActiveParents lists the parent jobs (keep selects the kind) that are
// not over: running, or asked to cancel.
func ActiveParents(ctx context.Context, st store.Store, keep func(*job.Job) bool) ([]*job.Job, error) {
	var out []*job.Job
	err := st.View(ctx, func(tx store.Tx) error {
		jobs, err := tx.ListJobs(job.JobFilter{Statuses: []string{job.JobRunning, job.JobCancelRequested}})
		if err != nil {
			return err
		}
		for _, j := range jobs {
			if j.IsParent() && keep(j) {
				out = append(out, j)
			}
		}
		return nil
	})
	// Oldest first: earlier pipelines submit their steps first.
	sort.Slice(out, func(a, b int) bool { return out[a].Seq < out[b].Seq })
	return out, err
}

// children reads the child jobs of names (absent: not submitted).
func children(ctx context.Context, st store.Store, workspace string, names []string) (map[string]*job.Job, error) {
	out := map[string]*job.Job{}
	err := st.View(ctx, func(tx store.Tx) error {
		for _, n := range names {
			j, err := tx.GetJob(workspace, n)
			if core.ErrorCode(err) == core.ENOTFOUND {
				continue
			} else if err != nil {
				return err
			}
			out[n] = j
		}
		return nil
	})
	return out, err
}

// advance runs one pass over pipeline p.
func (l *Loop) advance(ctx context.Context, now time.Time, p *job.Job) error {
	if p.Status == job.JobCancelRequested {
		// Before anything else: nothing a step left, nor the document,
		// keeps a cancel from being carried out.
		return l.cancel(ctx, now, p)
	}
	g, err := pipelinejob.NewPipelineGraph(p.Pipeline)
	if err != nil {
		// Checked at submit: a stored pipeline that no longer passes
		// ends rather than blocking the loop.
		return l.finish(ctx, now, p, nil, job.JobFailed, "its document no longer passes: "+err.Error())
	}
	steps := map[string]*job.PipelineStepStatus{}
	var names []string
	for _, st := range p.Steps {
		steps[st.Name] = st
		names = append(names, job.PipelineChildName(p.Name, st.Name))
	}
	kids, err := children(ctx, l.s.Store(), p.Workspace, names)
	if err != nil {
		return err
	}
	// What each step's child says now; a completed step's outputs that
	// others read become artifacts of their own, once.
	consumed := consumedOutputs(g)
	states := map[string]string{}
	outputs := map[string]map[string]string{}
	for _, name := range g.Order() {
		st := steps[name]
		if child := kids[job.PipelineChildName(p.Name, name)]; child != nil && child.ParentJobName != p.Name {
			// A job of the step's name that is not this pipeline's (made
			// before it, by anyone) is never read as the step: its
			// status and outputs are not the pipeline's.
			st.Job, st.Status = "", job.JobFailed
			st.Reason = fmt.Sprintf("could not be submitted: job %q already exists and is not a child of %s", child.Name, p.Name)
		} else if child != nil {
			st.Job, st.Status = child.Name, child.Status
			st.Reason = child.StatusReason
			if child.Status == job.JobFailed && child.Error != "" {
				st.Reason = child.Error
			}
			if child.Status == job.JobCompleted {
				// A sweep's outputs are its best trial's.
				producer, why, err := outputProducer(ctx, l.s.Store(), child)
				if err != nil {
					return loop.Context(err, "the best trial of step %s", name)
				}
				if producer == nil && len(consumed[name]) > 0 {
					st.Status, st.Reason = job.JobFailed, why
				}
				for _, out := range consumed[name] {
					if _, ok := st.Outputs[out]; ok || producer == nil {
						continue
					}
					id, err := l.s.ChildOutputArtifact(ctx, producer, out)
					if err != nil {
						return loop.Context(err, "output %s of step %s", out, name)
					}
					if st.Outputs == nil {
						st.Outputs = map[string]string{}
					}
					st.Outputs[out] = id
				}
			}
		}
		if st.Status == "" {
			st.Status = job.JobNotStarted
		}
		states[name] = st.Status
		if len(st.Outputs) > 0 {
			outputs[name] = st.Outputs
		}
	}

	plan := g.Ready(states)
	for _, name := range plan.Cancel {
		if _, err := l.s.CancelJob(ctx, p.Workspace, steps[name].Job); err != nil {
			return loop.Context(err, "canceling step %s", name)
		}
	}
	for _, name := range plan.Skip {
		steps[name].Reason = "will not run: " + blockedBy(g, name, states, p.Pipeline.Settings.ContinueOnStepFailure)
	}
	for _, name := range plan.Start {
		st := steps[name]
		child, err := l.submitStep(ctx, p, g, name, outputs)
		if err == nil {
			st.Job, st.Status, st.Reason = child.Name, child.Status, child.StatusReason
			continue
		}
		// A step that cannot be submitted (its compute is gone, a quota
		// refuses it) fails as a step would: Ready decides the rest.
		st.Status, st.Reason = job.JobFailed, "could not be submitted: "+err.Error()
	}
	for _, name := range g.Order() {
		st := steps[name]
		if st.Job == "" && st.Status == job.JobNotStarted && !contains(plan.Skip, name) {
			if waits := waitingOn(g, name, states); len(waits) > 0 {
				st.Reason = "waits for " + strings.Join(waits, ", ")
			}
		}
	}
	if plan.Done {
		reason := "every step completed"
		if plan.Status != job.JobCompleted {
			reason = summary(g, steps)
		}
		return l.finish(ctx, now, p, steps, plan.Status, reason)
	}
	return l.save(ctx, p, steps, progress(g, steps))
}

// consumedOutputs lists, per step, the outputs another step or the
// pipeline reads.
func consumedOutputs(g *pipelinejob.PipelineGraph) map[string][]string {
	seen := map[string]map[string]bool{}
	add := func(step, out string) {
		if seen[step] == nil {
			seen[step] = map[string]bool{}
		}
		seen[step][out] = true
	}
	for _, e := range g.Edges() {
		add(e.From, e.Output)
	}
	for _, src := range g.OutputSources() {
		add(src.Step, src.Output)
	}
	out := map[string][]string{}
	for step, outs := range seen {
		for o := range outs {
			out[step] = append(out[step], o)
		}
		sort.Strings(out[step])
	}
	return out
}

// waitingOn lists the steps name reads from that have not completed.
func waitingOn(g *pipelinejob.PipelineGraph, name string, states map[string]string) []string {
	var out []string
	for _, d := range g.Dependencies(name) {
		if states[d] != job.JobCompleted {
			out = append(out, d)
		}
	}
	return out
}

// blockedBy says why a skipped step will not run.
func blockedBy(g *pipelinejob.PipelineGraph, name string, states map[string]string, continueOnFailure bool) string {
	for _, d := range g.Dependencies(name) {
		switch states[d] {
		case job.JobFailed, job.JobCanceled:
			return "step " + d + " " + strings.ToLower(states[d])
		}
	}
	if !continueOnFailure {
		return "a step failed and settings.continue_on_step_failure is false"
	}
	return "a step it depends on will not run"
}

// summary says how a pipeline that did not complete ended.
func summary(g *pipelinejob.PipelineGraph, steps map[string]*job.PipelineStepStatus) string {
	var failed, canceled, done []string
	for _, name := range g.Order() {
		switch steps[name].Status {
		case job.JobFailed:
			failed = append(failed, name)
		case job.JobCanceled:
			canceled = append(canceled, name)
		case job.JobCompleted:
			done = append(done, name)
		}
	}
	var parts []string
	if len(failed) > 0 {
		parts = append(parts, "failed: "+strings.Join(failed, ", "))
	}
	if len(canceled) > 0 {
		parts = append(parts, "canceled: "+strings.Join(canceled, ", "))
	}
	if len(done) > 0 {
		parts = append(parts, "completed: "+strings.Join(done, ", "))
	}
	return "steps " + strings.Join(parts, "; ")
}

// progress says where a running pipeline is.
func progress(g *pipelinejob.PipelineGraph, steps map[string]*job.PipelineStepStatus) string {
	count := map[string]int{}
	for _, name := range g.Order() {
		count[steps[name].Status]++
	}
	return fmt.Sprintf("%d of %d steps completed, %d running or queued, %d not started",
		count[job.JobCompleted], len(g.Order()), len(g.Order())-count[job.JobCompleted]-count[job.JobNotStarted]-count[job.JobFailed]-count[job.JobCanceled],
		count[job.JobNotStarted])
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// save writes the steps and the reason back to the pipeline, keeping a
// cancel asked for since it was read.
func (l *Loop) save(ctx context.Context, p *job.Job, steps map[string]*job.PipelineStepStatus, reason string) error {
	return l.write(ctx, p, steps, func(j *job.Job) {
		if j.Status == job.JobRunning {
			j.StatusReason = reason
		}
	})
}

// finish ends the pipeline with status (its outputs bound to the steps'
// that completed).
func (l *Loop) finish(ctx context.Context, now time.Time, p *job.Job, steps map[string]*job.PipelineStepStatus, status, reason string) error {
	return l.write(ctx, p, steps, func(j *job.Job) {
		j.Status, j.StatusReason, j.EndTime = status, reason, &now
		if status == job.JobFailed {
			j.Error = reason
		}
		if j.Pipeline == nil {
			return
		}
		g, err := pipelinejob.NewPipelineGraph(j.Pipeline)
		if err != nil {
			return
		}
		for name, src := range g.OutputSources() {
			st := steps[src.Step]
			if st == nil || st.Outputs[src.Output] == "" {
				continue
			}
			if j.Outputs == nil {
				j.Outputs = map[string]*job.JobOutput{}
			}
			j.Outputs[name] = &job.JobOutput{Type: job.InputTypeURIFolder, Path: st.Outputs[src.Output]}
		}
	})
}

// write applies change to the stored pipeline with its steps as this
// pass left them.
func (l *Loop) write(ctx context.Context, p *job.Job, steps map[string]*job.PipelineStepStatus, change func(*job.Job)) error {
	return l.s.Store().Update(ctx, func(tx store.Tx) error {
		j, err := tx.GetJob(p.Workspace, p.Name)
		if err != nil {
			return err
		}
		if job.JobTerminal(j.Status) {
			return nil
		}
		if steps != nil {
			for i, st := range j.Steps {
				if s := steps[st.Name]; s != nil {
					j.Steps[i] = s
				}
			}
		}
		change(j)
		j.Version++
		return UpdateParent(tx, j)
	})
}
