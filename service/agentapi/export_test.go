package agentapi

import (
	"context"

	"github.com/shoal-ml/shoal"
)

// SyncOnce is syncOnce, for the external tests that run it over the full
// services (package service, which links this one).
func (s *Server) SyncOnce(ctx context.Context, nodeID string, req *shoal.AgentSyncRequest, renew bool) (*shoal.AgentSyncResponse, error) {
	return s.syncOnce(ctx, nodeID, req, renew)
}
