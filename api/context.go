package api

import (
	"context"
	"net/http"
)

func withNode(ctx context.Context, nodeID string) context.Context {
	return context.WithValue(ctx, nodeKey{}, nodeID)
}

// nodeFrom returns the node ID the request's credential belongs to.
func nodeFrom(r *http.Request) string {
	id, _ := r.Context().Value(nodeKey{}).(string)
	return id
}
