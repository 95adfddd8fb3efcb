package api

import (
	"net/http"

	"github.com/shoal-ml/shoal/client"
)

func (s *Server) handleGetWorkspaceLimits(w http.ResponseWriter, r *http.Request) {
	out, err := s.svc.FindWorkspaceLimits(r.Context(), r.PathValue("ws"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handlePatchWorkspaceLimits(w http.ResponseWriter, r *http.Request) {
	var body client.WorkspaceLimitsUpdate
	if err := decodeStrict(r.Body, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.svc.UpdateWorkspaceLimits(r.Context(), r.PathValue("ws"), body.MaxLogBytes, body.StorageQuotaBytes)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
