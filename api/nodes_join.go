package api

import (
	"net/http"
)

// handleAddNode adds a node that its owner joins by hand and answers
// with the one-time join command (shown once: only its hash is kept).
func (s *Server) handleAddNode(w http.ResponseWriter, r *http.Request) {
	j, err := s.svc.AddStaticNode(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, j)
}

// handleRemoveNode removes a node joined by hand (it drains first).
func (s *Server) handleRemoveNode(w http.ResponseWriter, r *http.Request) {
	n, err := s.svc.RemoveStaticNode(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.PathValue("node"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, n)
}
