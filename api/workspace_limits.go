package api

import (
	"context"
	"net/http"

	"github.com/shoal-ml/shoal/service"
)

// WorkspaceLimitsUpdate is the body of PATCH .../limits: a field left out
// is unchanged, 0 restores the default.
type WorkspaceLimitsUpdate struct {
	MaxLogBytes       *int64 `json:"max_log_bytes,omitempty"`
	StorageQuotaBytes *int64 `json:"storage_quota_bytes,omitempty"`
}

func (s *Server) handleGetWorkspaceLimits(w http.ResponseWriter, r *http.Request) {
	out, err := s.svc.FindWorkspaceLimits(r.Context(), r.PathValue("ws"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handlePatchWorkspaceLimits(w http.ResponseWriter, r *http.Request) {
	var body WorkspaceLimitsUpdate
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

// GetWorkspaceLimits returns a workspace's limits and storage use.
func (c *Client) GetWorkspaceLimits(ctx context.Context, workspace string) (*service.WorkspaceLimitsView, error) {
	var out service.WorkspaceLimitsView
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/limits", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateWorkspaceLimits sets a workspace's limits (administrators).
func (c *Client) UpdateWorkspaceLimits(ctx context.Context, workspace string, upd *WorkspaceLimitsUpdate) (*service.WorkspaceLimitsView, error) {
	var out service.WorkspaceLimitsView
	if _, err := c.do(ctx, http.MethodPatch, wsPath(workspace)+"/limits", upd, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
