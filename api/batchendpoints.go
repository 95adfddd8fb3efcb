package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/arm"
	"github.com/shoal-ml/shoal/domain/batch"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
)

// Batch endpoints and deployments (service/batchendpoints): the
// documents are the YAML's keys as JSON, as `shoal batch-endpoint
// create` sends them; the path names the resource, and a document naming
// another is refused.

// batchRoutes are the native API's batch endpoint routes.
func (s *Server) batchRoutes() []Route {
	const p = "/api/v1/workspaces/{ws}/batch-endpoints"
	return []Route{
		{Pattern: "GET " + p, Action: identity.ActBatchEndpointsRead, handler: s.handleListBatchEndpoints},
		{Pattern: "GET " + p + "/{name}", Action: identity.ActBatchEndpointsRead, handler: s.handleGetBatchEndpoint},
		{Pattern: "PUT " + p + "/{name}", Action: identity.ActBatchEndpointsWrite, handler: s.handlePutBatchEndpoint},
		{Pattern: "DELETE " + p + "/{name}", Action: identity.ActBatchEndpointsWrite, handler: s.handleDeleteBatchEndpoint},
		{Pattern: "POST " + p + "/{name}/invoke", Action: identity.ActBatchEndpointsInvoke, handler: s.handleInvokeBatchEndpoint},
		{Pattern: "GET " + p + "/{name}/jobs", Action: identity.ActBatchEndpointsRead, handler: s.handleListBatchEndpointJobs},
		{Pattern: "POST " + p + "/{name}/jobs", Action: identity.ActBatchEndpointsInvoke, handler: s.handleScoreBatchEndpoint},
		{Pattern: "POST " + p + "/{name}/tokens", Action: identity.ActBatchEndpointsWrite, handler: s.handleCreateInvokeToken},
		{Pattern: "GET " + p + "/{name}/deployments", Action: identity.ActBatchEndpointsRead, handler: s.handleListBatchDeployments},
		{Pattern: "GET " + p + "/{name}/deployments/{dep}", Action: identity.ActBatchEndpointsRead, handler: s.handleGetBatchDeployment},
		{Pattern: "PUT " + p + "/{name}/deployments/{dep}", Action: identity.ActBatchEndpointsWrite, handler: s.handlePutBatchDeployment},
		{Pattern: "DELETE " + p + "/{name}/deployments/{dep}", Action: identity.ActBatchEndpointsWrite, handler: s.handleDeleteBatchDeployment},
	}
}

// namedDocument sets a document's key to the path's name, refusing a
// document that names another.
func namedDocument(body []byte, key, name string) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return nil, core.Errorf(core.EINVALID, "the document must be a JSON mapping of keys to values")
	}
	if raw, ok := obj[key]; ok && string(raw) != "null" {
		var n string
		if json.Unmarshal(raw, &n) != nil || !strings.EqualFold(strings.TrimSpace(n), name) {
			return nil, core.FieldErrorf(key, "%s differs from the name in the path, %q", core.Short(string(raw)), core.Short(name))
		}
	}
	nb, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	obj[key] = nb
	return json.Marshal(obj)
}

// writeCreated answers 201 for a created resource, 200 for an updated one.
func writeCreated(w http.ResponseWriter, created bool, v any) {
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, v)
}

func (s *Server) handlePutBatchEndpoint(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err == nil {
		body, err = namedDocument(body, "name", r.PathValue("name"))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	e, err := batch.DecodeEndpoint(body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out, created, err := s.batch.CreateEndpoint(r.Context(), r.PathValue("ws"), e)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeCreated(w, created, out)
}

func (s *Server) handleGetBatchEndpoint(w http.ResponseWriter, r *http.Request) {
	e, err := s.batch.GetEndpoint(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, e)
}

func (s *Server) handleListBatchEndpoints(w http.ResponseWriter, r *http.Request) {
	list, err := s.batch.ListEndpoints(r.Context(), r.PathValue("ws"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*batch.Endpoint]{Value: list})
}

func (s *Server) handleDeleteBatchEndpoint(w http.ResponseWriter, r *http.Request) {
	if err := s.batch.DeleteEndpoint(r.Context(), r.PathValue("ws"), r.PathValue("name")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleInvokeBatchEndpoint starts a job (batch.Invocation's JSON) and
// answers it, 201.
func (s *Server) handleInvokeBatchEndpoint(w http.ResponseWriter, r *http.Request) {
	var inv batch.Invocation
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&inv); err != nil {
		s.writeError(w, r, core.Errorf(core.EINVALID, "the invocation must be a JSON mapping: input {type, path}, deployment_name, job_name, output_path (%v)", err))
		return
	}
	j, err := s.batch.Invoke(r.Context(), r.PathValue("ws"), r.PathValue("name"), &inv)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, j)
}

// invokeTokenRequest is POST …/tokens' body.
type invokeTokenRequest struct {
	// ExpiresInDays is the token's life; 0 never expires.
	ExpiresInDays int `json:"expires_in_days,omitempty"`
}

// InvokeTokenResponse is a new invoke token: the secret, shown once.
type InvokeTokenResponse struct {
	*identity.APIToken
	Token string `json:"token"`
}

// handleCreateInvokeToken makes a token that may only invoke the
// endpoint, acting as the caller.
func (s *Server) handleCreateInvokeToken(w http.ResponseWriter, r *http.Request) {
	var req invokeTokenRequest
	if r.ContentLength != 0 {
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil && err != io.EOF {
			s.writeError(w, r, core.Errorf(core.EINVALID, "the request must be a JSON mapping: expires_in_days (%v)", err))
			return
		}
	}
	tok, plain, err := s.batch.CreateInvokeToken(r.Context(), r.PathValue("ws"), r.PathValue("name"), time.Duration(req.ExpiresInDays)*24*time.Hour)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, InvokeTokenResponse{APIToken: tok, Token: plain})
}

// handleScoreBatchEndpoint is the endpoint's scoring URI: Azure's
// invocation (arm.Handlers.ScoreBatchEndpoint).
func (s *Server) handleScoreBatchEndpoint(w http.ResponseWriter, r *http.Request) {
	arm.Handlers{Svc: s.svc, Batch: s.batch}.ScoreBatchEndpoint(w, r)
}

func (s *Server) handleListBatchEndpointJobs(w http.ResponseWriter, r *http.Request) {
	list, err := s.batch.ListJobs(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*job.Job]{Value: list})
}

// handlePutBatchDeployment creates or updates a deployment;
// ?set_default=true makes it the endpoint's default.
func (s *Server) handlePutBatchDeployment(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err == nil {
		body, err = namedDocument(body, "name", r.PathValue("dep"))
	}
	if err == nil {
		body, err = namedDocument(body, "endpoint_name", r.PathValue("name"))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	d, err := batch.DecodeDeployment(body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out, created, err := s.batch.CreateDeployment(r.Context(), r.PathValue("ws"), d, r.URL.Query().Get("set_default") == "true")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeCreated(w, created, out)
}

func (s *Server) handleGetBatchDeployment(w http.ResponseWriter, r *http.Request) {
	d, err := s.batch.GetDeployment(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.PathValue("dep"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) handleListBatchDeployments(w http.ResponseWriter, r *http.Request) {
	list, err := s.batch.ListDeployments(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*batch.Deployment]{Value: list})
}

func (s *Server) handleDeleteBatchDeployment(w http.ResponseWriter, r *http.Request) {
	if err := s.batch.DeleteDeployment(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.PathValue("dep")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// armBatchRoutes are Azure's batch endpoint and deployment routes, and
// the endpoints' scoring URI (batchRoutes), which
// ml_client.batch_endpoints.invoke POSTs Azure's BatchJobResource to.
func armBatchRoutes(h arm.Handlers) []Route {
	c := arm.Checked
	const p = armPrefix + "/batchEndpoints"
	return []Route{
		{Pattern: "GET " + p, Action: identity.ActBatchEndpointsRead, handler: c(h.ListBatchEndpoints)},
		{Pattern: "GET " + p + "/{name}", Action: identity.ActBatchEndpointsRead, handler: c(h.GetBatchEndpoint)},
		{Pattern: "PUT " + p + "/{name}", Action: identity.ActBatchEndpointsWrite, handler: c(h.PutBatchEndpoint)},
		{Pattern: "DELETE " + p + "/{name}", Action: identity.ActBatchEndpointsWrite, handler: c(h.DeleteBatchEndpoint)},
		{Pattern: "GET " + p + "/{name}/deployments", Action: identity.ActBatchEndpointsRead, handler: c(h.ListBatchDeployments)},
		{Pattern: "GET " + p + "/{name}/deployments/{dep}", Action: identity.ActBatchEndpointsRead, handler: c(h.GetBatchDeployment)},
		{Pattern: "PUT " + p + "/{name}/deployments/{dep}", Action: identity.ActBatchEndpointsWrite, handler: c(h.PutBatchDeployment)},
		{Pattern: "DELETE " + p + "/{name}/deployments/{dep}", Action: identity.ActBatchEndpointsWrite, handler: c(h.DeleteBatchDeployment)},
	}
}
