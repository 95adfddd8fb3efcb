package api

import (
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

func (s *Server) handleListComputes(w http.ResponseWriter, r *http.Request) {
	inc, err := boolParam(r.URL.Query().Get("include_serverless"), "include_serverless")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	list, err := s.svc.ListComputes(r.Context(), compute.ComputeFilter{Workspace: r.PathValue("ws"), Type: r.URL.Query().Get("type"), IncludeServerless: inc})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]*compute.Compute, len(list))
	for i, c := range list {
		out[i] = c.Redacted()
	}
	writeJSON(w, http.StatusOK, listBody[*compute.Compute]{Value: out})
}

// listBody is the envelope of every list response, as Azure's
// (httpx.List).
type listBody[T any] = httpx.List[T]

func (s *Server) handleGetCompute(w http.ResponseWriter, r *http.Request) {
	c, err := s.svc.FindCompute(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeCompute(w, http.StatusOK, c)
}

func (s *Server) handlePutCompute(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	spec, err := compute.DecodeComputeSpec(body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	name := r.PathValue("name")
	if spec.Name == "" {
		spec.Name = name
	} else if !strings.EqualFold(spec.Name, name) {
		s.writeError(w, r, core.FieldErrorf("name", "%q differs from the name in the URL (%q)", spec.Name, name))
		return
	}
	if r.Header.Get("If-None-Match") == "*" {
		// Create only (the studio's create form): an existing compute of
		// that name is not changed.
		if _, err := s.svc.FindCompute(r.Context(), r.PathValue("ws"), name); err == nil {
			s.writeError(w, r, core.FieldErrorf("name", "a compute named %q already exists in workspace %s", name, r.PathValue("ws")))
			return
		}
	}
	c, created, err := s.svc.CreateOrApplyCompute(r.Context(), r.PathValue("ws"), spec, r.Header.Get("If-Match"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeCompute(w, status, c)
}

func (s *Server) handlePatchCompute(w http.ResponseWriter, r *http.Request) {
	var upd compute.ComputeUpdate
	if err := decodeStrict(r.Body, &upd); err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := s.svc.UpdateCompute(r.Context(), r.PathValue("ws"), r.PathValue("name"), &upd, r.Header.Get("If-Match"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeCompute(w, http.StatusOK, c)
}

func (s *Server) handleDeleteCompute(w http.ResponseWriter, r *http.Request) {
	c, err := s.svc.DeleteCompute(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.Header.Get("If-Match"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeCompute(w, http.StatusAccepted, c)
}

func (s *Server) handleComputeEvents(w http.ResponseWriter, r *http.Request) {
	events, err := s.svc.ListComputeEvents(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*core.Event]{Value: events})
}

func writeCompute(w http.ResponseWriter, status int, c *compute.Compute) {
	w.Header().Set("ETag", c.ETag)
	writeJSON(w, status, c.Redacted())
}

// boolParam reads the true/false query parameter name of value v;
// absent is false.
func boolParam(v, name string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, core.FieldErrorf(name, "must be true or false, got %q", v)
	}
	return b, nil
}
