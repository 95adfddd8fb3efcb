package api

import (
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal"
)

// handleCreateEnvironment registers a version: POST to the collection
// (name in the body, version from the body or the next one) or PUT to
// .../{name}/versions/{version}, whose path wins over the body's.
func (s *Server) handleCreateEnvironment(w http.ResponseWriter, r *http.Request) {
	var e shoal.Environment
	if err := decodeStrict(r.Body, &e); err != nil {
		s.writeError(w, r, err)
		return
	}
	for _, p := range []struct {
		field, path string
		value       *string
	}{{"name", r.PathValue("name"), &e.Name}, {"version", r.PathValue("version"), &e.Version}} {
		if p.path == "" {
			continue
		}
		if *p.value != "" && *p.value != p.path {
			s.writeError(w, r, shoal.FieldErrorf(p.field, "%q differs from the %s in the URL (%q)", *p.value, p.field, p.path))
			return
		}
		*p.value = p.path
	}
	e.Workspace = r.PathValue("ws")
	out, created, err := s.envs.CreateEnvironment(r.Context(), &e)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, out)
}

func (s *Server) handleListEnvironments(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := shoal.EnvironmentFilter{Workspace: r.PathValue("ws"), Name: q.Get("name"), Archived: q.Get("archived") == "true"}
	list, err := s.envs.ListEnvironments(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*shoal.Environment]{Value: list})
}

func (s *Server) handleGetEnvironment(w http.ResponseWriter, r *http.Request) {
	e, err := s.envs.GetEnvironment(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.PathValue("version"), r.PathValue("label"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, e)
}

// handleArchiveEnvironment archives (…/archive) or restores (…/restore)
// the version of ?version=, or every version without it.
func (s *Server) handleArchiveEnvironment(w http.ResponseWriter, r *http.Request) {
	archived := strings.HasSuffix(r.URL.Path, "/archive")
	list, err := s.envs.ArchiveEnvironment(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.URL.Query().Get("version"), archived)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*shoal.Environment]{Value: list})
}
