package pipelines

import (
	"context"
	"fmt"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/store"
)

// submitStep submits step name of pipeline p as its child: a command
// job, or a sweep job for a sweep step.
func (l *Loop) submitStep(ctx context.Context, p *job.Job, g *pipelinejob.PipelineGraph, name string, outputs map[string]map[string]string) (*job.Job, error) {
	run := pipelinejob.PipelineRun{Outputs: outputs}
	if s := p.Pipeline.Jobs[name]; s != nil && s.Sweep != nil {
		spec, err := g.ResolveSweep(name, run)
		if err != nil {
			return nil, err
		}
		spec.Name = job.PipelineChildName(p.Name, name)
		return l.s.SubmitChildSweep(ctx, p, spec)
	}
	spec, err := g.Resolve(name, run)
	if err != nil {
		return nil, err
	}
	spec.Name = job.PipelineChildName(p.Name, name)
	return l.s.SubmitChildJob(ctx, p, spec)
}

// outputProducer is the job whose outputs a completed step's child
// gives: the child itself, or for a sweep its best trial. A sweep with no
// best trial (none logged its primary metric) gives none, and why says
// so: the steps that read its outputs cannot run.
func outputProducer(ctx context.Context, st store.Store, child *job.Job) (producer *job.Job, why string, err error) {
	if child.Sweep == nil {
		return child, "", nil
	}
	if child.BestChildRunID == "" {
		metric := ""
		if child.Sweep.Objective != nil {
			metric = child.Sweep.Objective.PrimaryMetric
		}
		return nil, fmt.Sprintf("its sweep completed with no best trial: no trial logged its primary metric %s, so it has no outputs to pass on", metric), nil
	}
	err = st.View(ctx, func(tx store.Tx) error {
		producer, err = tx.GetJob(child.Workspace, child.BestChildRunID)
		return err
	})
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, "its sweep's best trial " + child.BestChildRunID + " is gone", nil
	}
	return producer, "", err
}
