package service

import (
	"context"

	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
)

// Place starts a job on nodes if the job is still queued and the nodes
// still free, and returns the nodes as written (scheduling.Placer.Place).
func (s *Services) Place(ctx context.Context, tx store.Tx, ref store.QueuedJobRef, nodeIDs []string) ([]*node.Node, error) {
	return s.placer.Place(ctx, tx, ref, nodeIDs)
}

// handOn gives a node that has just finished its work the job a pass
// would give it (scheduling.Placer.HandOn: it writes n only when it
// places a job on it).
func (s *Services) handOn(ctx context.Context, tx store.Tx, n *node.Node) (*scheduling.Started, error) {
	return s.placer.HandOn(ctx, tx, n)
}
