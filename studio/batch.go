package studio

import (
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal/domain/batch"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/service/batchendpoints"
)

// The batch endpoint pages read through service/batchendpoints, the
// service the API's routes use, after the viewer's right to read batch
// endpoints is checked as those routes check it. The endpoint page's
// invoke form posts to the API's invoke route from studio.js (with the
// session's CSRF header), so its rules and refusals are the API's.

// The actions the batch endpoint pages check: the ones the API's routes
// for the same data declare (pinned by TestStudioPagesUseTheRoutesActions).
const (
	batchPageAction   = identity.ActBatchEndpointsRead
	batchInvokeAction = identity.ActBatchEndpointsInvoke
)

// batchOf is the batch endpoint service over the studio's store, jobs and
// files, configured as the API configures its own.
func (s *Studio) batchOf() *batchendpoints.Service {
	return batchendpoints.New(batchendpoints.Config{Store: s.cfg.Svc.Store(), Jobs: s.cfg.Svc, Artifacts: s.cfg.Svc.Files()})
}

// endpointRow is a line of the endpoint list.
type endpointRow struct {
	*batch.Endpoint
	Deployments int
}

// batchEndpointsPage lists the workspace's batch endpoints.
func (s *Studio) batchEndpointsPage(q *req) error {
	if err := s.allow(q, batchPageAction); err != nil {
		return err
	}
	svc := s.batchOf()
	list, err := svc.ListEndpoints(q.ctx, q.workspace)
	if err != nil {
		return err
	}
	rows := make([]endpointRow, 0, len(list))
	for _, e := range list {
		deps, err := svc.ListDeployments(q.ctx, q.workspace, e.Name)
		if err != nil {
			return err
		}
		rows = append(rows, endpointRow{Endpoint: e, Deployments: len(deps)})
	}
	return s.render(q, "batchendpoints", "Batch endpoints", "endpoints", map[string]any{"Endpoints": rows})
}

// batchEndpointPage shows an endpoint: its fields, its deployments, the
// jobs its invocations started, its scoring URI and, to a viewer who may
// invoke it, the invoke form.
func (s *Studio) batchEndpointPage(q *req) error {
	if err := s.allow(q, batchPageAction); err != nil {
		return err
	}
	svc := s.batchOf()
	e, err := svc.GetEndpoint(q.ctx, q.workspace, q.r.PathValue("name"))
	if err != nil {
		return err
	}
	deps, err := svc.ListDeployments(q.ctx, q.workspace, e.Name)
	if err != nil {
		return err
	}
	jobs, err := svc.ListJobs(q.ctx, q.workspace, e.Name)
	if err != nil {
		return err
	}
	return s.render(q, "batchendpoint", "Batch endpoint "+e.Name, "endpoints", map[string]any{
		"E": e, "Deployments": deps, "Jobs": jobs, "ScoringURI": s.scoringURI(q.r, e),
		"CanInvoke":  s.can(q, batchInvokeAction) && len(deps) > 0,
		"InputTypes": []string{"uri_folder", "uri_file", "mltable"},
	})
}

// scoringURI is where Azure's SDK posts an invocation (the URI the ARM
// answer names): the server's public URL, else the one this request
// reached.
func (s *Studio) scoringURI(r *http.Request, e *batch.Endpoint) string {
	base := strings.TrimSuffix(s.cfg.Svc.PublicURL(), "/")
	if base == "" {
		scheme := "http"
		if r.TLS != nil || s.cfg.Secure {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	return base + "/api/v1/workspaces/" + e.Workspace + "/batch-endpoints/" + e.Name + "/jobs"
}

// stepTypes maps a pipeline's step names to their types (command,
// sweep, parallel), for the steps table.
func stepTypes(j *job.Job) map[string]string {
	out := map[string]string{}
	if j.Pipeline == nil {
		return out
	}
	for name, st := range j.Pipeline.Jobs {
		if st != nil {
			out[name] = st.Type
		}
	}
	return out
}
