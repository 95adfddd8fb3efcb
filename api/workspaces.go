package api

import (
	"net/http"

	"github.com/shoal-ml/shoal/domain/core"
)

func (s *Server) handleListWorkspaces(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListWorkspaces(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*core.Workspace]{Value: list})
}

func (s *Server) handleCreateWorkspace(w http.ResponseWriter, r *http.Request) {
	var ws core.Workspace
	if err := decodeStrict(r.Body, &ws); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.svc.CreateWorkspace(r.Context(), &ws)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) handleGetWorkspace(w http.ResponseWriter, r *http.Request) {
	ws, err := s.svc.FindWorkspace(r.Context(), r.PathValue("ws"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ws)
}

// handleDeleteWorkspace deletes a workspace that has no computes and no
// unfinished jobs (409 says what remains).
func (s *Server) handleDeleteWorkspace(w http.ResponseWriter, r *http.Request) {
	if err := s.svc.DeleteWorkspace(r.Context(), r.PathValue("ws")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
