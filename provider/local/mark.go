package local

import (
	nodekind "github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/procmark"
)

// NodeMark returns the mark the node's agent puts in the environment of
// every process it starts: its ID and work dir (see internal/procmark).
func (p *Provider) NodeMark(nd *nodekind.Node) []string {
	return procmark.Node(nd.ID, p.nodeDir(nd.ID))
}

var _ nodekind.NodeMarker = (*Provider)(nil)
