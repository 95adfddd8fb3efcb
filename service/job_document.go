package service

import (
	"context"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
)

// SubmitJobDocument submits a job document (the JSON of a job's YAML, as
// the CLI sends it) of any kind Shoal runs: command, pipeline or sweep.
// urlName, when set, is the name a PUT's path gives: the document's name
// must be it or empty. It is the one submit path of both faces: the
// native API's handlers and Azure's ARM job routes (which turn Azure's
// REST body into this document first) call it, so that a job is decoded,
// checked and stored the same way whichever client sent it.
func (s *Services) SubmitJobDocument(ctx context.Context, workspace, urlName string, body []byte) (*job.Job, bool, error) {
	nameFrom := func(name *string) error {
		if urlName == "" {
			return nil
		}
		if *name == "" {
			*name = urlName
		} else if *name != urlName {
			return core.FieldErrorf("name", "%q differs from the name in the URL (%q)", *name, urlName)
		}
		return nil
	}
	typ, err := pipelinejob.DecodeJobType(body)
	if err != nil {
		return nil, false, err
	}
	switch typ {
	case job.JobTypePipeline:
		spec, err := pipelinejob.DecodePipelineSpec(body)
		if err != nil {
			return nil, false, err
		}
		if err := nameFrom(&spec.Name); err != nil {
			return nil, false, err
		}
		return s.SubmitPipeline(ctx, workspace, spec)
	case job.JobTypeSweep:
		spec, err := sweepjob.DecodeSweepSpec(body)
		if err != nil {
			return nil, false, err
		}
		if err := nameFrom(&spec.Name); err != nil {
			return nil, false, err
		}
		return s.SubmitSweep(ctx, workspace, spec)
	}
	spec, err := job.DecodeJobSpec(body)
	if err != nil {
		return nil, false, err
	}
	if err := nameFrom(&spec.Name); err != nil {
		return nil, false, err
	}
	return s.SubmitJob(ctx, workspace, spec)
}
