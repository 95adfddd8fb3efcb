package computes

import (
	"context"
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/serverless"
	"github.com/shoal-ml/shoal/store"
)

// EnsureServerlessPool returns the serverless pool that a job of spec
// (compute: serverless) runs on in workspace ws, creating it in tx when
// it does not exist, so that the pool and the job are written together or
// not at all. An existing pool's max_instances is raised when the job
// needs more nodes or the quota grew; it is never lowered here (nodes
// may be running). Beyond being created here and hidden from `compute
// list`, a pool is an ordinary cluster: the scheduler and autoscaler
// treat it as any other, and quotas and budgets charge it the same.
// Returns EINVALID (resources.instance_type) and ECONFLICT (a cluster of
// the user's holds the pool's name, or the pool is being deleted).
func (s *Service) EnsureServerlessPool(ctx context.Context, tx store.Tx, ws *core.Workspace, spec *job.JobSpec) (*compute.Compute, error) {
	plan, err := serverless.PlanPool(s.catalog, ws.Location, spec)
	if err != nil {
		return nil, err
	}
	own, err := tx.GetWorkspaceQuotas(ws.Name)
	if err != nil {
		return nil, err
	}
	ownLimit, hasOwn := own[strings.ToLower(plan.Size.Family)]
	want := serverless.MaxInstances(plan.Location, plan.Size, plan.Tier, ownLimit, hasOwn, spec.InstanceCount())
	c, err := tx.GetCompute(ws.Name, plan.Name)
	if core.ErrorCode(err) == core.ENOTFOUND {
		c, err = s.insertServerlessPool(ctx, tx, ws, plan, want)
		if core.ErrorCode(err) != core.ECONFLICT {
			return c, err
		}
		// Another submit created it since we looked: that transaction
		// has committed (the insert waited for it), so read its pool.
		c, err = tx.GetCompute(ws.Name, plan.Name)
	}
	if err != nil {
		return nil, err
	}
	if !c.Serverless {
		return nil, &core.Error{Code: core.ECONFLICT, Field: "compute", Message: fmt.Sprintf(
			"compute: the serverless pool for %s (%s) is named %q, and a compute of yours has that name; rename or delete it, or submit to it with compute: azureml:%s",
			plan.Size.Name, plan.Tier, plan.Name, c.Name)}
	}
	if c.ProvisioningState == compute.ProvisioningDeleting {
		return nil, &core.Error{Code: core.ECONFLICT, Field: "compute", Message: fmt.Sprintf(
			"compute: serverless pool %q is being deleted; submit again once it is gone (a new one is created then)", c.Name)}
	}
	if *c.MaxInstances < want {
		old := *c.MaxInstances
		next := *c
		next.MaxInstances = &want
		return s.saveUpdate(ctx, tx, &next, []string{fmt.Sprintf("max_instances %d → %d (serverless: the quota or a job's instance_count)", old, want)})
	}
	return c, nil
}

func (s *Service) insertServerlessPool(ctx context.Context, tx store.Tx, ws *core.Workspace, plan *serverless.Pool, maxN int) (*compute.Compute, error) {
	zero := 0
	spec := compute.ComputeSpec{
		Name: plan.Name, Type: compute.ComputeTypeCluster, Description: serverless.Description,
		Size: plan.Size.Name, Location: plan.Location.Name, Tier: plan.Tier,
		MinInstances: &zero, MaxInstances: &maxN, Serverless: true,
	}
	// The defaults of any cluster (idle_time_before_scale_down among
	// them), and its rules: a plan that breaks one is a bug to report,
	// not a pool to write.
	loc, size, err := compute.NormalizeClusterSpec(&spec, s.catalog, ws.Location)
	if err != nil {
		return nil, fmt.Errorf("serverless pool %q: %w", plan.Name, err)
	}
	now := tx.Now()
	c := &compute.Compute{
		ComputeSpec: spec, Workspace: ws.Name, Version: 1,
		ProvisioningState: compute.ProvisioningCreating, ProvisioningErrors: []compute.ProvisioningError{},
		CreatedOn: now, ModifiedOn: now, CreatedBy: serverless.Creator,
	}
	if err := tx.InsertCompute(c); err != nil {
		return nil, err
	}
	reason := fmt.Sprintf("serverless pool for a job of %s: %s on %s capacity at %s, 0 to %d nodes, idle %d s before scale down",
		identity.ActorName(ctx), size.Name, spec.Tier, loc.Name, *spec.MaxInstances, *spec.IdleTimeBeforeScaleDown)
	if err := compute.AppendComputeEvent(ctx, tx, c, core.EventCreated, reason); err != nil {
		return nil, err
	}
	return c, nil
}

// checkServerlessChange refuses a user's change to a serverless pool:
// Shoal manages its settings.
func checkServerlessChange(c *compute.Compute) error {
	if c.Serverless {
		return &core.Error{Code: core.ECONFLICT, Field: "name", Message: fmt.Sprintf(
			"compute %q is a serverless pool that Shoal manages for jobs without a compute; it cannot be changed (create a cluster of another name to choose its settings)", c.Name)}
	}
	return nil
}

// checkServerlessDelete refuses to delete a serverless pool while a job
// that is not finished uses it: a user's cluster is deleted with its
// queued jobs failed, but those jobs never named this pool.
func checkServerlessDelete(tx store.Tx, c *compute.Compute) error {
	if !c.Serverless {
		return nil
	}
	jobs, err := tx.ListJobs(job.JobFilter{Workspace: c.Workspace, Compute: c.Name, Statuses: unfinishedJobStatuses})
	if err != nil {
		return err
	}
	if len(jobs) > 0 {
		return core.Errorf(core.ECONFLICT, "compute %q is a serverless pool and %d unfinished job(s) use it (%s first); cancel them or let them finish, then delete it (the next serverless job creates it again)",
			c.Name, len(jobs), jobs[0].Name)
	}
	return nil
}

var unfinishedJobStatuses = []string{
	job.JobNotStarted, job.JobQueued, job.JobPreparing, job.JobRunning,
	job.JobFinalizing, job.JobCancelRequested,
}
