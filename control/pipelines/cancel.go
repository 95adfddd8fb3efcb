package pipelines

import (
	"context"
	"errors"
	"time"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// cancel carries out a cancel asked of pipeline p from its steps' child
// jobs alone (not its document, not its outputs: what made its passes
// fail must not keep it from ending): a step that runs is canceled, one
// never submitted will not run, and the pipeline ends Canceled once no
// step runs. A step that cannot be canceled does not hold up the others;
// its error is the pass's.
func (l *Loop) cancel(ctx context.Context, now time.Time, p *job.Job) error {
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
	active := 0
	var errs []error
	for _, st := range p.Steps {
		child := kids[job.PipelineChildName(p.Name, st.Name)]
		if child != nil {
			st.Job, st.Status, st.Reason = child.Name, child.Status, child.StatusReason
			if child.Status == job.JobFailed && child.Error != "" {
				st.Reason = child.Error
			}
		} else if st.Job != "" && !job.JobTerminal(st.Status) {
			// Submitted, and gone since: nothing runs.
			st.Status, st.Reason = job.JobCanceled, "canceled"
		}
		if st.Status == "" {
			st.Status = job.JobNotStarted
		}
		switch {
		case job.JobTerminal(st.Status):
		case st.Job == "":
			st.Reason = "will not run: the pipeline was canceled"
		case st.Status == job.JobCancelRequested:
			active++
		default:
			c, err := l.s.CancelJob(ctx, p.Workspace, st.Job)
			switch {
			case err != nil && core.ErrorCode(err) == core.ENOTFOUND:
				st.Status, st.Reason = job.JobCanceled, "canceled"
			case err != nil:
				active++
				errs = append(errs, loop.Context(err, "canceling step %s", st.Name))
			default:
				// A queued step ends at once: the pipeline need not wait
				// a pass for it.
				st.Status, st.Reason = c.Status, c.StatusReason
				if !job.JobTerminal(c.Status) {
					active++
				}
			}
		}
	}
	if active == 0 && len(errs) == 0 {
		return l.finish(ctx, now, p, steps, job.JobCanceled, "canceled")
	}
	if err := l.save(ctx, p, steps, "cancel requested: waiting for its running steps to end"); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
