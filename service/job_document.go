package service

import (
	"context"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
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
//
// A document under the name of an existing job whose definition is that
// job's (all but its description, tags and display name) updates those
// fields, as Azure's PUT of an existing job does, and answers the job
// (created false); one whose definition differs is ECONFLICT naming the
// first field that differs, and changes nothing.
func (s *Services) SubmitJobDocument(ctx context.Context, workspace, urlName string, body []byte) (*job.Job, bool, error) {
	d, err := decodeJobDocument(body, urlName)
	if err != nil {
		return nil, false, err
	}
	if err := d.checkChainedIdentity(ctx); err != nil {
		return nil, false, err
	}
	var j *job.Job
	created := false
	switch {
	case d.pipeline != nil:
		j, created, err = s.SubmitPipeline(ctx, workspace, d.pipeline)
	case d.sweep != nil:
		j, created, err = s.SubmitSweep(ctx, workspace, d.sweep)
	default:
		j, created, err = s.SubmitJob(ctx, workspace, d.command)
	}
	switch {
	case err == nil && !created:
		j, err = s.updateJobFields(ctx, workspace, j.Name, d.fields())
	case core.ErrorCode(err) == core.ECONFLICT && core.ErrorField(err) == "name":
		var same bool
		if same, err = s.definitionConflict(ctx, workspace, d, err); same {
			j, err = s.updateJobFields(ctx, workspace, d.name(), d.fields())
		}
	}
	return j, created, err
}

// jobDocument is a decoded job document: one of its kinds' specs.
type jobDocument struct {
	command  *job.JobSpec
	pipeline *job.PipelineSpec
	sweep    *job.SweepSpec
}

// decodeJobDocument decodes body by its type; urlName, when set, is the
// name the document must have or takes.
func decodeJobDocument(body []byte, urlName string) (*jobDocument, error) {
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
		return nil, err
	}
	switch typ {
	case job.JobTypePipeline:
		spec, err := pipelinejob.DecodePipelineSpec(body)
		if err != nil {
			return nil, err
		}
		return &jobDocument{pipeline: spec}, nameFrom(&spec.Name)
	case job.JobTypeSweep:
		spec, err := sweepjob.DecodeSweepSpec(body)
		if err != nil {
			return nil, err
		}
		return &jobDocument{sweep: spec}, nameFrom(&spec.Name)
	}
	spec, err := job.DecodeJobSpec(body)
	if err != nil {
		return nil, err
	}
	if err := nameFrom(&spec.Name); err != nil {
		return nil, err
	}
	// A job's outputs are shown with the paths they were given, the
	// default one included: a job sent back as it was shown (azure-ai-ml's
	// get, change, create_or_update) is the job it was.
	for out, o := range spec.Outputs {
		if o != nil && spec.Name != "" && o.Path == jobio.ExpandOutputPath("", spec.Name, out) {
			o.Path = ""
		}
	}
	return &jobDocument{command: spec}, nil
}

// fields are the document's mutable fields.
func (d *jobDocument) fields() JobFields {
	switch {
	case d.pipeline != nil:
		return JobFields{DisplayName: d.pipeline.DisplayName, Description: d.pipeline.Description, Tags: d.pipeline.Tags}
	case d.sweep != nil:
		return JobFields{DisplayName: d.sweep.DisplayName, Description: d.sweep.Description, Tags: d.sweep.Tags}
	}
	return JobFields{DisplayName: d.command.DisplayName, Description: d.command.Description, Tags: d.command.Tags}
}

// spec is the document's definition as its kind stores it.
func (d *jobDocument) spec() any {
	switch {
	case d.pipeline != nil:
		return d.pipeline
	case d.sweep != nil:
		return d.sweep
	}
	return d.command
}

// name is the document's job name.
func (d *jobDocument) name() string {
	switch {
	case d.pipeline != nil:
		return d.pipeline.Name
	case d.sweep != nil:
		return d.sweep.Name
	}
	return d.command.Name
}
