package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/shoal-ml/shoal/service/jobdata"
	"strings"

	"github.com/shoal-ml/shoal/decide/jobrun"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/domain/job/paralleljob"
	"github.com/shoal-ml/shoal/service/access"
	"github.com/shoal-ml/shoal/service/environments"
	"github.com/shoal-ml/shoal/store"
)

// SubmitJob queues a command job on a compute cluster, or on serverless
// compute (see EnsureServerlessPool). Submission is idempotent by name:
// the same name and body returns the existing job.
func (s *Services) SubmitJob(ctx context.Context, workspace string, spec *job.JobSpec) (*job.Job, bool, error) {
	return s.submitJob(ctx, workspace, spec, nil)
}

// submitJob queues a command job; parent, when set, is the pipeline or
// sweep that submits it: the child is its submitter's, and names it.
func (s *Services) submitJob(ctx context.Context, workspace string, spec *job.JobSpec, parent *job.Job) (*job.Job, bool, error) {
	if spec.Name == "" {
		spec.Name = job.GenerateJobName(s.cfg.Random)
	}
	if err := job.NormalizeJobSpec(spec); err != nil {
		return nil, false, err
	}
	// A parallel job (a pipeline's parallel step, a batch endpoint's
	// invocation) runs Shoal's driver and nothing else.
	if err := paralleljob.Validate(spec); err != nil {
		return nil, false, err
	}
	if parent == nil {
		if err := chainedUserIdentity(ctx, "identity", spec.Identity); err != nil {
			return nil, false, err
		}
	}
	if ri := identity.RequestInfoFrom(ctx); ri != nil && ri.Target == "workspaces/"+workspace+"/jobs" {
		// A valid job submitted by POST to the collection is audited
		// under its own name, so that `audit list --target` finds it (a
		// refused one stays under the collection it was posted to).
		ri.Target += "/" + spec.Name
	}
	if err := s.checkArtifacts(workspace, spec); err != nil {
		return nil, false, err
	}
	hash, err := docHash(spec)
	if err != nil {
		return nil, false, err
	}
	// A job stored before definitions left out the mutable fields has
	// its whole document's hash: the same document is still that job
	// (a pipeline's loop submits its steps again after a restart).
	legacy, err := specHash(spec)
	if err != nil {
		return nil, false, err
	}
	var out *job.Job
	created := false
	named := spec.Compute
	err = s.store.Update(ctx, func(tx store.Tx) error {
		// A run again (store.Store.Update) starts from the request: its
		// compute as asked (serverless is replaced by its pool below),
		// nothing created.
		spec.Compute, out, created = named, nil, false
		ws, err := tx.GetWorkspace(workspace)
		if err != nil {
			if core.ErrorCode(err) == core.ENOTFOUND {
				return core.WorkspaceNotFound(workspace)
			}
			return err
		}
		if existing, err := tx.GetJob(workspace, spec.Name); err == nil {
			if parent != nil && existing.ParentJobName != parent.Name {
				return &core.Error{Code: core.ECONFLICT, Field: "name", Message: fmt.Sprintf(
					"job %q already exists and is not a child of %s", spec.Name, parent.Name)}
			}
			if existing.SpecHash != hash && existing.SpecHash != legacy {
				return &core.Error{Code: core.ECONFLICT, Field: "name", Message: fmt.Sprintf(
					"job %q already exists with a different definition; job names are unique in a workspace (omit name: to get a generated one)", spec.Name)}
			}
			out = existing
			return nil
		} else if core.ErrorCode(err) != core.ENOTFOUND {
			return err
		}
		c, err := s.jobCompute(ctx, tx, ws, spec)
		if err != nil {
			return err
		}
		if c.ProvisioningState == compute.ProvisioningDeleting || c.ProvisioningState == compute.ProvisioningFailed {
			return &core.Error{Code: core.ECONFLICT, Field: "compute", Message: fmt.Sprintf("compute: %q is %s and takes no jobs", c.Name, c.ProvisioningState)}
		}
		spec.Compute = c.Name
		if err := access.CheckJobIdentity(tx, c, "identity", spec.Identity); err != nil {
			return err
		}
		if err := jobdata.ResolveInputAssets(tx, c.Workspace, "inputs", spec.Inputs); err != nil {
			return err
		}
		env, err := asset.ResolveJobEnvironment(tx, c.Workspace, spec.Environment, s.cfg.CuratedEnvironments)
		if err != nil {
			return err
		}
		if env == nil {
			env = s.instanceEnvironment(tx, c)
		}
		if err := s.checkContainers(tx, c, env); err != nil {
			return err
		}
		if err := checkSubnet(c, env, spec.InstanceCount()); err != nil {
			return err
		}
		if err := s.checkInstanceType(c, spec); err != nil {
			return err
		}
		if n := spec.InstanceCount(); c.IsInstance() && n > 1 {
			return &core.Error{Code: core.EINVALID, Field: "resources.instance_count", Message: fmt.Sprintf(
				"resources.instance_count: compute %q is a compute instance, one machine: a job on it runs on 1 node, not %d (use a compute cluster)", c.Name, n)}
		} else if !c.IsInstance() && n > *c.MaxInstances {
			return &core.Error{Code: core.EINVALID, Field: "resources.instance_count", Message: fmt.Sprintf(
				"resources.instance_count: the job needs %d nodes but compute %q has max_instances %d; raise max_instances or ask for fewer nodes", n, c.Name, *c.MaxInstances)}
		}
		seq, err := tx.NextSeq("job")
		if err != nil {
			return err
		}
		now := tx.Now()
		j := &job.Job{
			JobSpec: *spec, Workspace: c.Workspace, Status: job.JobQueued,
			StatusReason:        "queued: waiting for the scheduler",
			ResolvedEnvironment: env,
			CreatedBy:           identity.ActorName(ctx), CreatedByPrincipal: identity.ActingPrincipalID(ctx), CreatedOn: now, Seq: seq, SpecHash: hash, Version: 1,
		}
		if parent != nil {
			// A step or trial is its parent's submitter's: its rights,
			// quotas and budgets.
			j.ParentJobName, j.CreatedBy, j.CreatedByPrincipal = parent.Name, parent.CreatedBy, parent.CreatedByPrincipal
		}
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		reason := fmt.Sprintf("submitted to %s: %d node(s), priority %s", c.Name, spec.InstanceCount(), priorityName(spec))
		if c.Serverless {
			reason += fmt.Sprintf("; serverless (%s, %s)", c.Size, c.Tier)
		}
		if env != nil {
			reason += "; environment " + env.Source
			if env.Source != "inline" && env.Image != "" {
				reason += " (image " + env.Image + ")"
			}
		}
		if err := AppendJobEvent(ctx, tx, j, "queued", reason); err != nil {
			return err
		}
		out, created = j, true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if created {
		s.submitted(compute.ComputeKey(out.Workspace, out.Compute))
	}
	return s.jobView(out), created, nil
}

// jobCompute returns the compute a job runs on: the one it names, or
// for serverless compute its pool, created in tx when needed.
func (s *Services) jobCompute(ctx context.Context, tx store.Tx, ws *core.Workspace, spec *job.JobSpec) (*compute.Compute, error) {
	if spec.Compute == job.ServerlessCompute {
		return s.EnsureServerlessPool(ctx, tx, ws, spec)
	}
	c, err := tx.GetCompute(ws.Name, spec.Compute)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, &core.Error{Code: core.ENOTFOUND, Field: "compute", Message: fmt.Sprintf("compute: %q not found in workspace %q; create it with `shoal compute create`, or omit compute: to run on serverless compute", spec.Compute, ws.Name)}
	}
	return c, err
}

func priorityName(spec *job.JobSpec) string {
	if spec.QueueSettings != nil && spec.QueueSettings.Priority != "" {
		return spec.QueueSettings.Priority
	}
	return job.PriorityMedium
}

// checkArtifacts refuses a job whose code or inputs name artifacts that were
// never uploaded to its workspace, or local paths (the CLI's to upload);
// remote inputs pass, to be checked against the workspace in the
// submission's transaction (resolveInputAssets, checkDataInputs) and
// fetched when an attempt is placed, so a job cannot fail later for a
// missing upload. Another workspace's artifact is refused with the same
// words as one never uploaded: a hash tells nothing across workspaces.
func (s *Services) checkArtifacts(workspace string, spec *job.JobSpec) error {
	if s.cfg.Files == nil {
		return core.Errorf(core.EINTERNAL, "this server has no file store")
	}
	if spec.Code != "" {
		if !job.ValidateArtifactRef(spec.Code) {
			return core.FieldErrorf("code", "must be an uploaded artifact (sha256:<hex>); `shoal job create -f` uploads local folders for you")
		}
		if !s.cfg.Files.HasArtifact(workspace, spec.Code) {
			return core.FieldErrorf("code", "artifact %s has not been uploaded", spec.Code)
		}
	}
	if env, ok := spec.Environment.(map[string]any); ok {
		if b, ok := env["build"].(map[string]any); ok {
			p, _ := b["path"].(string)
			if !job.ValidateArtifactRef(p) {
				return core.FieldErrorf("environment.build.path", "must be an uploaded build context (sha256:<hex>); `shoal job create -f` uploads the local folder for you")
			}
			df, _ := b["dockerfile_path"].(string)
			if df == "" {
				df = asset.DefaultDockerfilePath
			}
			if err := environments.CheckBuildContext(s.cfg.Files, workspace, "environment.build.", &asset.EnvironmentBuild{Path: p, DockerfilePath: df}); err != nil {
				return err
			}
		}
	}
	for name, in := range spec.Inputs {
		if in == nil || in.Path == "" {
			continue
		}
		in.Asset = "" // the server's to record, after the spec's hash
		switch jobio.PathKind(in.Path) {
		case jobio.AssetRef, jobio.DatastoreURI, jobio.URL:
			// Resolved when an attempt is placed; jobio checked its shape.
			continue
		case jobio.Local:
			return core.FieldErrorf("inputs."+name+".path", "%q is a local path, which the server cannot read: `shoal job create -f` uploads local files and folders; or give an asset (azureml:<name>:<version>), a datastore URI (azureml://datastores/<datastore>/paths/<path>) or a URL", core.Short(in.Path))
		}
		if !s.cfg.Files.HasArtifact(workspace, in.Path) {
			return core.FieldErrorf("inputs."+name+".path", "artifact %s has not been uploaded", in.Path)
		}
	}
	return nil
}

// checkDataInputs checks inputs' asset references and datastore URIs
// against the workspace (resolveInputAssets) without recording anything:
// for pipelines and sweeps, whose steps and trials record theirs when
// they are submitted.
func checkDataInputs(tx store.Tx, workspace string, inputs map[string]*job.JobInput) error {
	remote := map[string]*job.JobInput{}
	for name, in := range inputs {
		if in != nil && jobio.PathKind(in.Path).Remote() {
			c := *in
			remote[name] = &c
		}
	}
	if len(remote) == 0 {
		return nil
	}
	return jobdata.ResolveInputAssets(tx, workspace, "inputs", remote)
}

func specHash(spec *job.JobSpec) (string, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// FindJob returns one job.
func (s *Services) FindJob(ctx context.Context, workspace, name string) (out *job.Job, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		if out, err = s.getJob(tx, workspace, name); err != nil {
			return err
		}
		if err := s.withServices(tx, out); err != nil {
			return err
		}
		if err := withParallelProgress(tx, out); err != nil {
			return err
		}
		return s.withReasons(tx, out)
	})
	return s.jobView(out), err
}

// FindJobWithCost is FindJob with the job's cost so far (what `job show`
// prints); FindJob alone stays cheap for the paths that poll it.
func (s *Services) FindJobWithCost(ctx context.Context, workspace, name string) (out *job.Job, err error) {
	var cost *job.JobCost
	err = s.store.View(ctx, func(tx store.Tx) error {
		out, err = s.getJob(tx, workspace, name)
		if err != nil {
			return err
		}
		if cost, err = s.JobCost(tx, out, tx.Now()); err != nil {
			return err
		}
		if err := s.withServices(tx, out); err != nil {
			return err
		}
		if err := withParallelProgress(tx, out); err != nil {
			return err
		}
		return s.withReasons(tx, out)
	})
	v := s.jobView(out)
	if v != nil {
		v.Cost = cost
	}
	return v, err
}

func (s *Services) getJob(tx store.Tx, workspace, name string) (*job.Job, error) {
	j, err := tx.GetJob(workspace, name)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, core.Errorf(core.ENOTFOUND, "job %q not found in workspace %q", name, workspace)
	}
	return j, err
}

// ListJobs returns jobs, newest first.
func (s *Services) ListJobs(ctx context.Context, filter job.JobFilter) (out []*job.Job, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		if out, err = tx.ListJobs(filter); err != nil {
			return err
		}
		return s.withReasons(tx, out...)
	})
	for i, j := range out {
		out[i] = s.jobView(j)
	}
	return out, err
}

// ListAttempts returns a job's attempts.
func (s *Services) ListAttempts(ctx context.Context, workspace, name string) (out []*job.Attempt, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		if _, err := s.getJob(tx, workspace, name); err != nil {
			return err
		}
		out, err = tx.ListAttempts(workspace, name)
		return err
	})
	return out, err
}

// CancelJob cancels a queued job at once, and asks the nodes of a running
// one to stop it; it becomes Canceled when they confirm.
func (s *Services) CancelJob(ctx context.Context, workspace, name string) (*job.Job, error) {
	var out *job.Job
	var wake []string
	var outcomes JobOutcomes
	err := s.store.Update(ctx, func(tx store.Tx) error {
		outcomes.Reset()
		wake = nil // a run again starts over
		j, err := s.getJob(tx, workspace, name)
		if err != nil {
			return err
		}
		out = j
		if job.JobTerminal(j.Status) || j.Status == job.JobCancelRequested {
			return nil
		}
		if j.IsParent() {
			// Its loop cancels the children and ends it once they are.
			j.Status, j.StatusReason = job.JobCancelRequested, "cancel requested: its running "+parentChildren(j)+" are being canceled"
			j.Version++
			if err := tx.UpdateJob(j); err != nil {
				return err
			}
			return AppendJobEvent(ctx, tx, j, "cancel_requested", j.StatusReason)
		}
		before := markOf(j)
		var a *job.Attempt
		if j.CurrentAttemptID != "" {
			if a, err = tx.GetAttempt(j.CurrentAttemptID); err != nil {
				return err
			}
		}
		st, err := jobrun.Step(j, a, jobrun.Event{Kind: jobrun.Cancel}, tx.Now())
		if err != nil {
			return err
		}
		*j, wake = st.Job, st.Wake
		j.Version++
		if err := tx.UpdateJob(j); err != nil {
			return err
		}
		outcomes.note(before, j)
		return appendStepEvents(ctx, tx, j, st.Events)
	})
	if err != nil {
		return nil, err
	}
	s.Report(&outcomes)
	s.nodes.Wake(wake...)
	s.notify()
	return s.jobView(out), nil
}

// jobView fills the identifiers a client sees.
func (s *Services) jobView(j *job.Job) *job.Job {
	if j == nil {
		return nil
	}
	out := *j
	out.ID = fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/Microsoft.MachineLearningServices/workspaces/%s/jobs/%s",
		compute.Subscription, compute.ResourceGroup, j.Workspace, j.Name)
	out.Outputs = outputPathsView(j)
	return &out
}

// outputPathsView is a command job's outputs as `job show` tells them,
// as Azure does: each at its datastore path with ${{name}} and
// ${{output_name}} expanded (the default path for one without). The
// stored spec keeps them as written. A pipeline's or sweep's outputs are
// their steps' and trials', and stay as written.
func outputPathsView(j *job.Job) map[string]*job.JobOutput {
	if j.Pipeline != nil || j.Sweep != nil || len(j.Outputs) == 0 {
		return j.Outputs
	}
	outs := make(map[string]*job.JobOutput, len(j.Outputs))
	for name, o := range j.Outputs {
		if o == nil {
			outs[name] = o
			continue
		}
		c := *o
		c.Path = jobio.ExpandOutputPath(o.Path, j.Name, name)
		outs[name] = &c
	}
	return outs
}

// AppendJobEvent records an event on a job in tx, as the principal of
// ctx.
func AppendJobEvent(ctx context.Context, tx store.Tx, j *job.Job, kind, reason string) error {
	return tx.AppendEvent(&core.Event{
		Time: tx.Now(), Workspace: j.Workspace, ResourceType: core.ResourceJob,
		ResourceName: j.Name, Kind: kind, Actor: identity.ActorName(ctx), Reason: reason,
	})
}

// ListJobEvents returns a job's event log.
func (s *Services) ListJobEvents(ctx context.Context, workspace, name string) (out []*core.Event, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		if _, err := s.getJob(tx, workspace, name); err != nil {
			return err
		}
		out, err = tx.ListEvents(core.EventFilter{Workspace: workspace, ResourceType: core.ResourceJob, ResourceName: name})
		return err
	})
	return out, err
}

// principalName is a principal's ID without its kind ("user:").
func principalName(id string) string {
	_, n, ok := strings.Cut(id, ":")
	if !ok {
		return id
	}
	return n
}
