// Package batchendpoints is the request service of batch endpoints and
// their deployments (`shoal batch-endpoint`, `shoal batch-deployment`,
// Azure's ARM batchEndpoints): keeping them, and invoking an endpoint,
// which submits the parallel job batch.InvocationJob builds through the
// same job service as any job (validation, quota, budgets), as the
// invoker.
package batchendpoints

import (
	"context"
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/batch"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/service/jobdata"
	"github.com/shoal-ml/shoal/store"
)

// Jobs is what invoking and listing an endpoint's jobs need of the job
// service (service.Services).
type Jobs interface {
	SubmitJob(ctx context.Context, workspace string, spec *job.JobSpec) (*job.Job, bool, error)
	ListJobs(ctx context.Context, filter job.JobFilter) ([]*job.Job, error)
}

// Artifacts says whether an uploaded artifact (a deployment's code) is
// in a workspace (store.Files).
type Artifacts interface {
	HasArtifact(workspace, id string) bool
}

// Config configures a Service.
type Config struct {
	Store     store.Store
	Jobs      Jobs
	Artifacts Artifacts
}

// Service keeps batch endpoints and deployments and invokes them.
type Service struct{ cfg Config }

// New returns a Service.
func New(cfg Config) *Service { return &Service{cfg: cfg} }

// CreateEndpoint creates an endpoint or, when one of the name exists,
// updates it (Azure's create_or_update), keeping who created it and, when
// the document sets none, its default deployment. A default deployment
// the document names must exist. Reports whether it was created.
func (s *Service) CreateEndpoint(ctx context.Context, workspace string, e *batch.Endpoint) (*batch.Endpoint, bool, error) {
	if err := batch.ValidateEndpoint(e); err != nil {
		return nil, false, err
	}
	created := false
	// The transaction fills in e's stored fields; a run again
	// (store.Store.Update) starts from the request's.
	request := *e
	err := s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		*e, created = request, false
		w, err := core.WorkspaceForWrite(tx, workspace)
		if err != nil {
			return err
		}
		e.Workspace, e.CreatedBy, e.CreatedOn = w.Name, identity.ActorName(ctx), tx.Now()
		old, err := tx.GetBatchEndpoint(w.Name, e.Name)
		switch {
		case err == nil:
			e.Name, e.CreatedBy, e.CreatedOn = old.Name, old.CreatedBy, old.CreatedOn
			if e.DefaultDeployment() == "" {
				e.Defaults = old.Defaults
			}
		case core.ErrorCode(err) == core.ENOTFOUND:
			created = true
		default:
			return err
		}
		if n := e.DefaultDeployment(); n != "" {
			d, err := tx.GetBatchDeployment(w.Name, e.Name, n)
			if core.ErrorCode(err) == core.ENOTFOUND {
				return &core.Error{Code: core.EINVALID, Field: "defaults.deployment_name", Message: fmt.Sprintf("defaults.deployment_name: endpoint %s has no deployment %q; create it first (shoal batch-deployment create -f deployment.yml)", e.Name, n)}
			} else if err != nil {
				return err
			}
			e.Defaults.DeploymentName = d.Name
		}
		return tx.PutBatchEndpoint(e)
	})
	if err != nil {
		return nil, false, err
	}
	return e, created, nil
}

// GetEndpoint returns an endpoint. Returns ENOTFOUND.
func (s *Service) GetEndpoint(ctx context.Context, workspace, name string) (out *batch.Endpoint, err error) {
	err = s.cfg.Store.View(ctx, func(tx store.Tx) error {
		out, err = getEndpoint(tx, workspace, name)
		return err
	})
	return out, err
}

// getEndpoint reads an endpoint, the workspace's absence said first.
func getEndpoint(tx store.Tx, workspace, name string) (*batch.Endpoint, error) {
	if _, err := tx.GetWorkspace(workspace); core.ErrorCode(err) == core.ENOTFOUND {
		return nil, core.WorkspaceNotFound(workspace)
	} else if err != nil {
		return nil, err
	}
	return tx.GetBatchEndpoint(workspace, name)
}

// ListEndpoints returns a workspace's endpoints by name.
func (s *Service) ListEndpoints(ctx context.Context, workspace string) (out []*batch.Endpoint, err error) {
	err = s.cfg.Store.View(ctx, func(tx store.Tx) error {
		if _, err := tx.GetWorkspace(workspace); core.ErrorCode(err) == core.ENOTFOUND {
			return core.WorkspaceNotFound(workspace)
		} else if err != nil {
			return err
		}
		out, err = tx.ListBatchEndpoints(workspace)
		return err
	})
	return out, err
}

// DeleteEndpoint deletes an endpoint and its deployments; the jobs its
// invocations started stay, as Azure's do.
func (s *Service) DeleteEndpoint(ctx context.Context, workspace, name string) error {
	return s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		if _, err := getEndpoint(tx, workspace, name); err != nil {
			return err
		}
		return tx.DeleteBatchEndpoint(workspace, name)
	})
}

// CreateDeployment creates a deployment or updates the one of the name
// (Azure's create_or_update). Its endpoint, compute, model and code must
// exist, and the job an invocation would run must be a valid job, so
// that an invocation fails only for its input. The endpoint's first
// deployment, or any when setDefault, becomes the endpoint's default.
func (s *Service) CreateDeployment(ctx context.Context, workspace string, d *batch.Deployment, setDefault bool) (*batch.Deployment, bool, error) {
	if err := batch.ValidateDeployment(d); err != nil {
		return nil, false, err
	}
	if !job.ValidateArtifactRef(d.CodeConfiguration.Code) {
		return nil, false, core.FieldErrorf("code_configuration.code", "must be an uploaded folder (sha256:<hex>); `shoal batch-deployment create -f` uploads the local folder for you")
	}
	// The job an invocation runs, with a stand-in input: every rule a
	// job has (environment variables, compute name, resources) is
	// checked now, not at the first invocation.
	trial := batch.InvocationJob(&batch.Endpoint{Name: d.EndpointName}, d, &batch.Invocation{Input: batch.Input{Type: jobio.TypeURIFolder, Path: "azureml://datastores/workspaceblobstore/paths/x"}})
	if err := job.NormalizeJobSpec(trial); err != nil {
		return nil, false, err
	}
	if err := checkRunnable(trial); err != nil {
		return nil, false, err
	}
	d.Compute = trial.Compute
	created := false
	// The transaction fills in d's stored fields; a run again starts
	// from the request's.
	request := *d
	err := s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		*d, created = request, false
		w, err := core.WorkspaceForWrite(tx, workspace)
		if err != nil {
			return err
		}
		ep, err := tx.GetBatchEndpoint(w.Name, d.EndpointName)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return &core.Error{Code: core.ENOTFOUND, Field: "endpoint_name", Message: fmt.Sprintf("endpoint_name: batch endpoint %s is not in workspace %s; create it first (shoal batch-endpoint create -f endpoint.yml)", d.EndpointName, w.Name)}
		} else if err != nil {
			return err
		}
		if s.cfg.Artifacts != nil && !s.cfg.Artifacts.HasArtifact(w.Name, d.CodeConfiguration.Code) {
			return core.FieldErrorf("code_configuration.code", "artifact %s has not been uploaded", d.CodeConfiguration.Code)
		}
		if _, err := tx.GetCompute(w.Name, d.Compute); core.ErrorCode(err) == core.ENOTFOUND {
			return &core.Error{Code: core.ENOTFOUND, Field: "compute", Message: fmt.Sprintf("compute: %q not found in workspace %s; create a cluster with `shoal compute create`", d.Compute, w.Name)}
		} else if err != nil {
			return err
		}
		if err := checkModel(tx, w.Name, d.Model); err != nil {
			return err
		}
		d.Workspace, d.EndpointName = w.Name, ep.Name
		d.CreatedBy, d.CreatedOn = identity.ActorName(ctx), tx.Now()
		old, err := tx.GetBatchDeployment(w.Name, ep.Name, d.Name)
		switch {
		case err == nil:
			d.Name, d.CreatedBy, d.CreatedOn = old.Name, old.CreatedBy, old.CreatedOn
		case core.ErrorCode(err) == core.ENOTFOUND:
			created = true
		default:
			return err
		}
		if err := tx.PutBatchDeployment(d); err != nil {
			return err
		}
		if setDefault || ep.DefaultDeployment() == "" {
			ep.Defaults = &batch.Defaults{DeploymentName: d.Name}
			return tx.PutBatchEndpoint(ep)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return d, created, nil
}

// checkModel refuses a model reference that names no registered model
// version, in the deployment's words (field model).
func checkModel(tx store.Tx, workspace, ref string) error {
	in := map[string]*job.JobInput{batch.InputModel: {Type: jobio.TypeCustomModel, Path: ref}}
	err := jobdata.ResolveInputAssets(tx, workspace, "deployment", in)
	if ce, ok := err.(*core.Error); ok {
		return &core.Error{Code: ce.Code, Field: "model", Message: "model: " + strings.TrimPrefix(ce.Message, ce.Field+": ")}
	}
	return err
}

// GetDeployment returns an endpoint's deployment. Returns ENOTFOUND.
func (s *Service) GetDeployment(ctx context.Context, workspace, endpoint, name string) (out *batch.Deployment, err error) {
	err = s.cfg.Store.View(ctx, func(tx store.Tx) error {
		if _, err := getEndpoint(tx, workspace, endpoint); err != nil {
			return err
		}
		out, err = tx.GetBatchDeployment(workspace, endpoint, name)
		return err
	})
	return out, err
}

// ListDeployments returns an endpoint's deployments by name.
func (s *Service) ListDeployments(ctx context.Context, workspace, endpoint string) (out []*batch.Deployment, err error) {
	err = s.cfg.Store.View(ctx, func(tx store.Tx) error {
		if _, err := getEndpoint(tx, workspace, endpoint); err != nil {
			return err
		}
		out, err = tx.ListBatchDeployments(workspace, endpoint)
		return err
	})
	return out, err
}

// DeleteDeployment deletes a deployment. The endpoint's default is
// refused while the endpoint has others (set another default first, as
// Azure asks); the last one leaves the endpoint without a default.
func (s *Service) DeleteDeployment(ctx context.Context, workspace, endpoint, name string) error {
	return s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		ep, err := getEndpoint(tx, workspace, endpoint)
		if err != nil {
			return err
		}
		if _, err := tx.GetBatchDeployment(workspace, endpoint, name); err != nil {
			return err
		}
		if strings.EqualFold(ep.DefaultDeployment(), name) {
			all, err := tx.ListBatchDeployments(workspace, endpoint)
			if err != nil {
				return err
			}
			if len(all) > 1 {
				return &core.Error{Code: core.ECONFLICT, Field: "name", Message: fmt.Sprintf("deployment %s is endpoint %s's default: make another the default first (shoal batch-endpoint update --name %s --set defaults.deployment_name=<other>)", name, ep.Name, ep.Name)}
			}
			ep.Defaults = nil
			if err := tx.PutBatchEndpoint(ep); err != nil {
				return err
			}
		}
		return tx.DeleteBatchDeployment(workspace, endpoint, name)
	})
}

// Invoke starts a job that scores inv.Input with the deployment it names
// (the endpoint's default otherwise), submitted as the caller.
func (s *Service) Invoke(ctx context.Context, workspace, endpoint string, inv *batch.Invocation) (*job.Job, error) {
	if err := batch.ValidateInput(&inv.Input); err != nil {
		return nil, err
	}
	var (
		ep  *batch.Endpoint
		dep *batch.Deployment
	)
	err := s.cfg.Store.View(ctx, func(tx store.Tx) error {
		var err error
		if ep, err = getEndpoint(tx, workspace, endpoint); err != nil {
			return err
		}
		name := strings.TrimSpace(inv.DeploymentName)
		if name == "" {
			if name = ep.DefaultDeployment(); name == "" {
				return &core.Error{Code: core.EINVALID, Field: "deployment_name", Message: fmt.Sprintf("deployment_name: endpoint %s has no default deployment: name one (--deployment-name) or create one (shoal batch-deployment create -f deployment.yml)", ep.Name)}
			}
		}
		dep, err = tx.GetBatchDeployment(workspace, ep.Name, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	spec := batch.InvocationJob(ep, dep, inv)
	j, _, err := s.cfg.Jobs.SubmitJob(ctx, workspace, spec)
	return j, err
}

// ListJobs returns the jobs an endpoint's invocations started, newest
// first (those of a deleted endpoint of the same name included: the
// tag is all a job keeps).
func (s *Service) ListJobs(ctx context.Context, workspace, endpoint string) ([]*job.Job, error) {
	ep, err := s.GetEndpoint(ctx, workspace, endpoint)
	if err != nil {
		return nil, err
	}
	all, err := s.cfg.Jobs.ListJobs(ctx, job.JobFilter{Workspace: workspace})
	if err != nil {
		return nil, err
	}
	out := []*job.Job{}
	for _, j := range all {
		if strings.EqualFold(j.Tags[batch.TagEndpoint], ep.Name) {
			out = append(out, j)
		}
	}
	return out, nil
}
