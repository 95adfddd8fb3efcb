package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// handlePutDatastore creates or replaces a datastore from its document
// (the YAML's keys as JSON, credentials included); the answer never
// holds the credentials (a Datastore's JSON has none). The path names
// it; a document naming another is refused.
func (s *Server) handlePutDatastore(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	body, err = withPathName(body, r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	spec, err := asset.DecodeDatastore(body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out, created, err := s.datastores.Create(r.Context(), r.PathValue("ws"), spec)
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

// withPathName sets the document's name to the path's, refusing a
// document that names another.
func withPathName(body []byte, name string) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return nil, core.Errorf(core.EINVALID, "the datastore document must be a JSON mapping of keys to values (name, type, account_name, container_name, credentials, ...)")
	}
	if raw, ok := obj["name"]; ok {
		var n string
		if json.Unmarshal(raw, &n) != nil || !strings.EqualFold(strings.TrimSpace(n), name) {
			return nil, core.FieldErrorf("name", "%q differs from the name in the path, %q", core.Short(strings.Trim(string(raw), `"`)), core.Short(name))
		}
	}
	nb, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	obj["name"] = nb
	return json.Marshal(obj)
}

func (s *Server) handleListDatastores(w http.ResponseWriter, r *http.Request) {
	list, err := s.datastores.List(r.Context(), r.PathValue("ws"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*asset.Datastore]{Value: list})
}

func (s *Server) handleGetDatastore(w http.ResponseWriter, r *http.Request) {
	d, err := s.datastores.Get(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) handleDeleteDatastore(w http.ResponseWriter, r *http.Request) {
	if err := s.datastores.Delete(r.Context(), r.PathValue("ws"), r.PathValue("name")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
