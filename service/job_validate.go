package service

import (
	"context"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/paralleljob"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
	"github.com/shoal-ml/shoal/store"
)

// ValidateJobDocument checks a job document as SubmitJobDocument would
// (its decoding, its kind's rules, its uploaded artifacts, its compute;
// a pipeline's components and graph) without submitting it or writing
// anything, and returns its type: a job schedule's job is checked at
// create, never at its first firing.
func (s *Services) ValidateJobDocument(ctx context.Context, workspace string, body []byte) (string, error) {
	d, err := decodeJobDocument(body, "")
	if err != nil {
		return "", err
	}
	err = d.checkChainedIdentity(ctx)
	typ, spec := job.JobTypeCommand, d.command
	switch {
	case err != nil:
	case d.pipeline != nil:
		typ, err = job.JobTypePipeline, pipelinejob.NormalizePipelineSpec(d.pipeline)
	case d.sweep != nil:
		typ, err = job.JobTypeSweep, sweepjob.NormalizeSweepSpec(d.sweep)
	default:
		if err = job.NormalizeJobSpec(spec); err == nil {
			err = paralleljob.Validate(spec)
		}
		if err == nil {
			typ, err = spec.Type, s.checkArtifacts(workspace, spec)
		}
	}
	if err != nil {
		return "", err
	}
	return typ, s.store.View(ctx, func(tx store.Tx) error {
		ws, err := tx.GetWorkspace(workspace)
		switch {
		case core.ErrorCode(err) == core.ENOTFOUND:
			return core.WorkspaceNotFound(workspace)
		case err != nil:
			return err
		case d.pipeline != nil:
			if err := pipelinejob.ResolvePipelineComponents(tx, ws.Name, d.pipeline); err != nil {
				return err
			}
			if _, err := pipelinejob.NewPipelineGraph(d.pipeline); err != nil {
				return err
			}
			return s.checkPipelineArtifacts(tx, ws.Name, d.pipeline)
		case d.sweep != nil || spec.Compute == job.ServerlessCompute:
			return nil
		}
		_, err = s.jobCompute(ctx, tx, ws, spec)
		return err
	})
}
