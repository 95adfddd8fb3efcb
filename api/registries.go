package api

import (
	"net/http"

	"github.com/shoal-ml/shoal/domain/asset"
)

// handleAddRegistry adds a registry login; the answer never holds the
// password (a Registry's JSON has none).
func (s *Server) handleAddRegistry(w http.ResponseWriter, r *http.Request) {
	var req asset.RegistryAdd
	if err := decodeStrict(r.Body, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.registries.AddRegistry(r.Context(), r.PathValue("ws"), &req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) handleListRegistries(w http.ResponseWriter, r *http.Request) {
	list, err := s.registries.ListRegistries(r.Context(), r.PathValue("ws"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*asset.Registry]{Value: list})
}

func (s *Server) handleRemoveRegistry(w http.ResponseWriter, r *http.Request) {
	if err := s.registries.RemoveRegistry(r.Context(), r.PathValue("ws"), r.PathValue("server")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
