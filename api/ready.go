package api

import (
	"context"
	"net/http"
)

// Readiness reports whether this server can serve: its store answers
// (with the schema it expects) and which role it has among replicas.
// The map is the body of /readyz; an error makes it 503.
type Readiness func(ctx context.Context) (map[string]any, error)

// SetReadiness installs what /readyz reports; without it /readyz answers
// as /healthz does.
func (s *Server) SetReadiness(r Readiness) { s.ready = r }

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if s.ready == nil {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ready"})
		return
	}
	body, err := s.ready(r.Context())
	if body == nil {
		body = map[string]any{}
	}
	if err != nil {
		body["status"], body["error"] = "unavailable", err.Error()
		writeJSON(w, http.StatusServiceUnavailable, body)
		return
	}
	body["status"] = "ready"
	writeJSON(w, http.StatusOK, body)
}
