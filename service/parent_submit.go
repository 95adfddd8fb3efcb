package service

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"

	"github.com/shoal-ml/shoal/decide/sweep"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
	"github.com/shoal-ml/shoal/internal/archive"
	"github.com/shoal-ml/shoal/store"
)

// EventWarning is the kind of a job event that says what Shoal accepted
// and ignored (a pipeline setting it does not know), so that nothing a
// user wrote is dropped silently.
const EventWarning = "warning"

// SubmitPipeline records a pipeline job: a parent that runs nothing
// itself, whose steps control/pipelines submits as command jobs as their
// inputs become ready. Its components are resolved now (a later version
// of a registered component does not change it), its graph is checked
// (cycles, bindings, types: errors name jobs.<step>.…), and every
// artifact it names must have been uploaded. Idempotent by name, as
// SubmitJob.
func (s *Services) SubmitPipeline(ctx context.Context, workspace string, spec *job.PipelineSpec) (*job.Job, bool, error) {
	if spec.Name == "" {
		spec.Name = job.GenerateJobName(s.cfg.Random)
	}
	if err := pipelinejob.NormalizePipelineSpec(spec); err != nil {
		return nil, false, err
	}
	s.auditUnder(ctx, workspace, spec.Name)
	hash, err := docHash(spec)
	if err != nil {
		return nil, false, err
	}
	return s.insertParent(ctx, workspace, spec.Name, hash, nil, func(tx store.Tx, ws *core.Workspace) (*job.Job, error) {
		if err := pipelinejob.ResolvePipelineComponents(tx, ws.Name, spec); err != nil {
			return nil, err
		}
		g, err := pipelinejob.NewPipelineGraph(spec)
		if err != nil {
			return nil, err
		}
		if err := s.checkPipelineArtifacts(tx, ws.Name, spec); err != nil {
			return nil, err
		}
		j := &job.Job{JobSpec: job.JobSpec{Name: spec.Name, Type: job.JobTypePipeline, DisplayName: spec.DisplayName,
			ExperimentName: spec.ExperimentName, Description: spec.Description, Tags: spec.Tags}, Pipeline: spec}
		for _, step := range g.Order() {
			child := job.PipelineChildName(spec.Name, step)
			if sw := spec.Jobs[step].Sweep; sw != nil {
				// A sweep step's trials are named after its job.
				n := job.DefaultSweepMaxTrials
				if sw.Limits != nil && sw.Limits.MaxTotalTrials > 0 {
					n = sw.Limits.MaxTotalTrials
				}
				child = job.SweepChildName(child, n)
			}
			if len(child) > job.MaxJobNameLength {
				return nil, core.FieldErrorf("jobs."+step, "the step's job would be named %q, longer than %d characters: shorten the pipeline's or the step's name", child, job.MaxJobNameLength)
			}
			j.Steps = append(j.Steps, &job.PipelineStepStatus{Name: step, Status: job.JobNotStarted, DependsOn: g.Dependencies(step)})
		}
		return j, nil
	})
}

// SubmitSweep records a sweep job: a parent whose trials control/sweeps
// submits as command jobs, max_concurrent_trials at a time. The seed its
// sampler draws from is the document's, or one drawn now and kept, so
// that a restarted server draws the same trials.
func (s *Services) SubmitSweep(ctx context.Context, workspace string, spec *job.SweepSpec) (*job.Job, bool, error) {
	return s.submitSweep(ctx, workspace, spec, nil)
}

// SubmitChildSweep submits a pipeline's sweep step as a sweep job of the
// pipeline's submitter, named by the caller (deterministic: submitting
// it again returns the one submitted), as SubmitChildJob does a command
// step.
func (s *Services) SubmitChildSweep(ctx context.Context, parent *job.Job, spec *job.SweepSpec) (*job.Job, error) {
	j, _, err := s.submitSweep(ctx, parent.Workspace, spec, parent)
	return j, err
}

// submitSweep is SubmitSweep, of parent's submitter when parent is set.
func (s *Services) submitSweep(ctx context.Context, workspace string, spec *job.SweepSpec, parent *job.Job) (*job.Job, bool, error) {
	if spec.Name == "" {
		spec.Name = job.GenerateJobName(s.cfg.Random)
	}
	if err := sweepjob.NormalizeSweepSpec(spec); err != nil {
		return nil, false, err
	}
	s.auditUnder(ctx, workspace, spec.Name)
	var seed int64
	if spec.SamplingAlgorithm.Seed != nil {
		seed = *spec.SamplingAlgorithm.Seed
	} else {
		var b [8]byte
		if _, err := io.ReadFull(s.cfg.Random, b[:]); err != nil {
			return nil, false, err
		}
		seed = int64(binary.LittleEndian.Uint64(b[:]) >> 1)
	}
	sampler, err := sweep.New(spec, seed)
	if err != nil {
		return nil, false, err
	}
	// The first trial is what every trial is, but for its parameters:
	// checked now, so that a sweep that cannot run is refused at submit.
	params, ok := sampler.Next(nil)
	if !ok {
		return nil, false, core.FieldErrorf("search_space", "gives no trial to run")
	}
	first, err := sweepjob.TrialJobSpec(spec, params.Render())
	if err == nil {
		err = s.checkArtifacts(workspace, first)
	}
	if err != nil {
		return nil, false, err
	}
	if child := job.SweepChildName(spec.Name, spec.Limits.MaxTotalTrials); len(child) > job.MaxJobNameLength {
		return nil, false, core.FieldErrorf("name", "a trial's job would be named %q, longer than %d characters: shorten the sweep's name", child, job.MaxJobNameLength)
	}
	hash, err := docHash(spec)
	if err != nil {
		return nil, false, err
	}
	return s.insertParent(ctx, workspace, spec.Name, hash, parent, func(tx store.Tx, ws *core.Workspace) (*job.Job, error) {
		if err := checkDataInputs(tx, ws.Name, first.Inputs); err != nil {
			return nil, err
		}
		return &job.Job{JobSpec: job.JobSpec{Name: spec.Name, Type: job.JobTypeSweep, DisplayName: spec.DisplayName,
			ExperimentName: spec.ExperimentName, Description: spec.Description, Tags: spec.Tags, Compute: ""},
			Sweep: spec, SweepSeed: seed}, nil
	})
}

// insertParent stores the parent job build makes, unless one of that
// name exists: the same document returns it, another is ECONFLICT. Under
// a parent (a pipeline's sweep step) it is that parent's child, of its
// submitter.
func (s *Services) insertParent(ctx context.Context, workspace, name, hash string, parent *job.Job, build func(tx store.Tx, ws *core.Workspace) (*job.Job, error)) (*job.Job, bool, error) {
	var out *job.Job
	created := false
	err := s.store.Update(ctx, func(tx store.Tx) error {
		out, created = nil, false // a run again starts over
		ws, err := tx.GetWorkspace(workspace)
		if err != nil {
			if core.ErrorCode(err) == core.ENOTFOUND {
				return core.WorkspaceNotFound(workspace)
			}
			return err
		}
		if existing, err := tx.GetJob(workspace, name); err == nil {
			if parent != nil && existing.ParentJobName != parent.Name {
				return &core.Error{Code: core.ECONFLICT, Field: "name", Message: fmt.Sprintf(
					"job %q already exists and is not a child of %s", name, parent.Name)}
			}
			if existing.SpecHash != hash {
				return &core.Error{Code: core.ECONFLICT, Field: "name", Message: fmt.Sprintf(
					"job %q already exists with a different definition; job names are unique in a workspace (omit name: to get a generated one)", name)}
			}
			out = existing
			return nil
		} else if core.ErrorCode(err) != core.ENOTFOUND {
			return err
		}
		j, err := build(tx, ws)
		if err != nil {
			return err
		}
		seq, err := tx.NextSeq("job")
		if err != nil {
			return err
		}
		now := tx.Now()
		j.Workspace, j.Status, j.StartTime = ws.Name, job.JobRunning, &now
		j.StatusReason = "its " + parentChildren(j) + " are submitted as they become ready"
		j.CreatedBy, j.CreatedByPrincipal, j.CreatedOn = identity.ActorName(ctx), identity.ActingPrincipalID(ctx), now
		if parent != nil {
			j.ParentJobName, j.CreatedBy, j.CreatedByPrincipal = parent.Name, parent.CreatedBy, parent.CreatedByPrincipal
		}
		j.Seq, j.SpecHash, j.Version = seq, hash, 1
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		if err := AppendJobEvent(ctx, tx, j, "submitted", fmt.Sprintf("%s job submitted: its %s run as jobs of their own", j.Type, parentChildren(j))); err != nil {
			return err
		}
		for _, w := range pipelinejob.IgnoredWarnings(j.Pipeline) {
			if err := AppendJobEvent(ctx, tx, j, EventWarning, w); err != nil {
				return err
			}
		}
		out, created = j, true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if created {
		s.notify()
	}
	return s.jobView(out), created, nil
}

// parentChildren names a parent's children for people.
func parentChildren(j *job.Job) string {
	if j.Sweep != nil {
		return "trials"
	}
	return "steps"
}

// auditUnder files a valid job POSTed to the collection under its own
// name, as SubmitJob does.
func (s *Services) auditUnder(ctx context.Context, workspace, name string) {
	if ri := identity.RequestInfoFrom(ctx); ri != nil && ri.Target == "workspaces/"+workspace+"/jobs" {
		ri.Target += "/" + name
	}
}

// checkPipelineArtifacts refuses a pipeline whose inputs or inline
// components name artifacts never uploaded to the workspace.
func (s *Services) checkPipelineArtifacts(tx store.Tx, workspace string, spec *job.PipelineSpec) error {
	if err := s.checkArtifacts(workspace, &job.JobSpec{Inputs: spec.Inputs}); err != nil {
		return err
	}
	if err := checkDataInputs(tx, workspace, spec.Inputs); err != nil {
		return err
	}
	for name, step := range spec.Jobs {
		check := &job.JobSpec{}
		if c := step.Component; c != nil {
			check.Code, check.Environment = c.Code, c.Environment
		}
		for in, si := range step.Inputs {
			if si != nil && si.Bind == "" && si.Path != "" {
				if check.Inputs == nil {
					check.Inputs = map[string]*job.JobInput{}
				}
				check.Inputs[in] = &job.JobInput{Type: si.Type, Path: si.Path}
			}
		}
		err := s.checkArtifacts(workspace, check)
		if err == nil {
			err = checkDataInputs(tx, workspace, check.Inputs)
		}
		if err != nil {
			if e, ok := err.(*core.Error); ok && e.Field != "" {
				return core.FieldErrorf("jobs."+name+"."+e.Field, "%s", core.ErrorMessage(err))
			}
			return err
		}
	}
	return nil
}

// docHash identifies a submitted parent document.
func docHash(v any) (string, error) {
	b, err := json.Marshal(v)
	if err == nil {
		b, err = withoutMutableFields(b) // job_definition.go
	}
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// SubmitChildJob submits a pipeline's step or a sweep's trial as a
// command job of the parent's submitter, named by the caller
// (deterministic: submitting it again returns the one submitted).
func (s *Services) SubmitChildJob(ctx context.Context, parent *job.Job, spec *job.JobSpec) (*job.Job, error) {
	j, _, err := s.submitJob(ctx, parent.Workspace, spec, parent)
	return j, err
}

// ChildOutputArtifact makes output of a completed child job (rank 0's
// folder of that name, from its last attempt that left outputs) an
// artifact of its own: what the next step of a pipeline downloads as its
// input, or what the pipeline's output is. An output folder the job left
// empty is an empty archive.
func (s *Services) ChildOutputArtifact(ctx context.Context, child *job.Job, output string) (string, error) {
	if s.cfg.Files == nil {
		return "", core.Errorf(core.EINTERNAL, "this server has no file store")
	}
	for n := child.AttemptCount; n >= 1; n-- {
		f, err := s.cfg.Files.OpenOutputs(child.Workspace, child.Name, n, 0)
		if err != nil {
			continue
		}
		pr, pw := io.Pipe()
		go func() {
			_, err := archive.Subtree(pw, f, output)
			f.Close()
			pw.CloseWithError(err)
		}()
		id, err := s.PutArtifact(ctx, child.Workspace, pr, MaxOutputBytes)
		pr.Close()
		return id, err
	}
	// No attempt left an archive: an agent uploads none when the outputs
	// folder holds nothing (older agents not even for a declared
	// folder), so the folder was empty. The pipeline that reads it goes
	// on with an empty folder; answering not-found here kept it Running
	// for good.
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(archive.Empty(pw)) }()
	id, err := s.PutArtifact(ctx, child.Workspace, pr, MaxOutputBytes)
	pr.Close()
	return id, err
}
