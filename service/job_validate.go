package service

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/paralleljob"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
	"github.com/shoal-ml/shoal/store"
)

// ValidateJobDocument checks a job document as SubmitJobDocument would
// (its decoding, its kind's rules, its uploaded artifacts, its compute
// and, for a pipeline, its components and graph) without submitting it
// or writing anything: a job schedule's job is checked when the schedule
// is created, so that an invalid job file is refused then, never at the
// schedule's first firing. It returns the job's type.
func (s *Services) ValidateJobDocument(ctx context.Context, workspace string, body []byte) (string, error) {
	d, err := decodeJobDocument(body, "")
	if err != nil {
		return "", err
	}
	if err := d.checkChainedIdentity(ctx); err != nil {
		return "", err
	}
	switch {
	case d.pipeline != nil:
		spec := d.pipeline
		if err := pipelinejob.NormalizePipelineSpec(spec); err != nil {
			return "", err
		}
		return job.JobTypePipeline, s.store.View(ctx, func(tx store.Tx) error {
			ws, err := validWorkspace(tx, workspace)
			if err != nil {
				return err
			}
			if err := pipelinejob.ResolvePipelineComponents(tx, ws.Name, spec); err != nil {
				return err
			}
			if _, err := pipelinejob.NewPipelineGraph(spec); err != nil {
				return err
			}
			return s.checkPipelineArtifacts(tx, ws.Name, spec)
		})
	case d.sweep != nil:
		if err := sweepjob.NormalizeSweepSpec(d.sweep); err != nil {
			return "", err
		}
		return job.JobTypeSweep, s.store.View(ctx, func(tx store.Tx) error {
			_, err := validWorkspace(tx, workspace)
			return err
		})
	}
	spec := d.command
	if err := job.NormalizeJobSpec(spec); err != nil {
		return "", err
	}
	if err := paralleljob.Validate(spec); err != nil {
		return "", err
	}
	if err := s.checkArtifacts(workspace, spec); err != nil {
		return "", err
	}
	typ := spec.Type
	if typ == "" {
		typ = job.JobTypeCommand
	}
	return typ, s.store.View(ctx, func(tx store.Tx) error {
		ws, err := validWorkspace(tx, workspace)
		if err != nil || spec.Compute == job.ServerlessCompute {
			return err
		}
		_, err = s.jobCompute(ctx, tx, ws, spec)
		return err
	})
}

// validWorkspace reads a workspace, its absence said as every request
// says it.
func validWorkspace(tx store.Tx, workspace string) (*core.Workspace, error) {
	ws, err := tx.GetWorkspace(workspace)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, core.WorkspaceNotFound(workspace)
	}
	return ws, err
}

// JobDocument returns an existing job's definition as a job document
// that SubmitJobDocument takes (its kind's spec, without its name): what
// a schedule's `create_job: azureml:<job>` submits at each firing.
// Returns ENOTFOUND naming the job.
func (s *Services) JobDocument(ctx context.Context, workspace, name string) (json.RawMessage, error) {
	var j *job.Job
	err := s.store.View(ctx, func(tx store.Tx) error {
		if _, err := validWorkspace(tx, workspace); err != nil {
			return err
		}
		var err error
		j, err = tx.GetJob(workspace, name)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return &core.Error{Code: core.ENOTFOUND, Field: "name", Message: fmt.Sprintf("job %s is not in workspace %s; see `shoal job list`", name, workspace)}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var spec any = &j.JobSpec
	switch {
	case j.Pipeline != nil:
		spec = j.Pipeline
	case j.Sweep != nil:
		spec = j.Sweep
	}
	fields, err := topFields(spec)
	if err != nil {
		return nil, err
	}
	delete(fields, "name")
	return json.Marshal(fields)
}
