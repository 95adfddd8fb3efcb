package agentapi

import (
	"context"

	"github.com/shoal-ml/shoal/domain/node"
)

// SyncOnce is syncOnce, for the external tests that run it over the full
// services (package service, which links this one).
func (s *Server) SyncOnce(ctx context.Context, nodeID string, req *node.AgentSyncRequest, renew bool) (*node.AgentSyncResponse, error) {
	return s.syncOnce(ctx, nodeID, req, renew)
}
