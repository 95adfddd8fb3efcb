package api

import (
	"io"
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal"
)

// handleCreateComponent registers a version of a command component: POST
// to the collection (name in the body, version from the body or the next
// one) or PUT to .../{name}/versions/{version}, whose path wins over the
// body's. The body is the component document as JSON (the YAML's keys),
// decoded strictly: an unknown key is refused naming it.
func (s *Server) handleCreateComponent(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := shoal.DecodeComponent(body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	for _, p := range []struct {
		field, path string
		value       *string
	}{{"name", r.PathValue("name"), &c.Name}, {"version", r.PathValue("version"), &c.Version}} {
		if p.path == "" {
			continue
		}
		if *p.value != "" && *p.value != p.path {
			s.writeError(w, r, shoal.FieldErrorf(p.field, "%q differs from the %s in the URL (%q)", *p.value, p.field, p.path))
			return
		}
		*p.value = p.path
	}
	c.Workspace = r.PathValue("ws")
	out, created, err := s.comps.CreateComponent(r.Context(), c)
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

func (s *Server) handleListComponents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := shoal.ComponentFilter{Workspace: r.PathValue("ws"), Name: q.Get("name"), Archived: q.Get("archived") == "true"}
	list, err := s.comps.ListComponents(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*shoal.Component]{Value: list})
}

func (s *Server) handleGetComponent(w http.ResponseWriter, r *http.Request) {
	c, err := s.comps.GetComponent(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.PathValue("version"), r.PathValue("label"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// handleArchiveComponent archives (…/archive) or restores (…/restore)
// the version of ?version=, or every version without it.
func (s *Server) handleArchiveComponent(w http.ResponseWriter, r *http.Request) {
	archived := strings.HasSuffix(r.URL.Path, "/archive")
	list, err := s.comps.ArchiveComponent(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.URL.Query().Get("version"), archived)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*shoal.Component]{Value: list})
}
