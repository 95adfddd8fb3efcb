package api

import (
	"io"
	"net/http"
	"strconv"

	"github.com/shoal-ml/shoal"
)

// handleAgentSetupLog appends (at ?offset=) to the setup log of the
// instance the calling node serves.
func (s *Server) handleAgentSetupLog(w http.ResponseWriter, r *http.Request) {
	offset, err := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
	if err != nil || offset < 0 {
		s.writeError(w, r, shoal.FieldErrorf("offset", "must be a whole number of bytes"))
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.svc.WriteInstanceSetupLog(r.Context(), nodeFrom(r), offset, data); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleAgentAppLog appends (at ?offset=) to the log of the custom
// application ?app= of the instance the calling node serves.
func (s *Server) handleAgentAppLog(w http.ResponseWriter, r *http.Request) {
	offset, err := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
	if err != nil || offset < 0 {
		s.writeError(w, r, shoal.FieldErrorf("offset", "must be a whole number of bytes"))
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.svc.WriteInstanceAppLog(r.Context(), nodeFrom(r), r.URL.Query().Get("app"), offset, data); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleAgentInstanceToken mints a workload token for the user's shells
// and notebooks on an instance (its MSI endpoint).
func (s *Server) handleAgentInstanceToken(w http.ResponseWriter, r *http.Request) {
	var req shoal.TokenRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	resp, err := s.svc.MintInstanceToken(r.Context(), nodeFrom(r), &req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, resp)
}
