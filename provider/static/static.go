// Package static is the `static` provider: a location whose nodes are
// only machines their owners join by hand (`shoal compute add-node`).
// Shoal starts and stops nothing there, so it cannot provision: a cluster
// at a static location grows only by the nodes added to it.
package static

import (
	"context"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
)

// Provider is the static provider of one location.
type Provider struct {
	// Location names the location in the errors it returns.
	Location string
}

var _ node.Provider = (*Provider)(nil)

// Name returns "static".
func (p *Provider) Name() string { return "static" }

// Provision refuses: nodes of a static location join by hand. The error
// is EQUOTA (out of capacity), so the autoscaler explains it and backs
// off instead of retrying at once.
func (p *Provider) Provision(ctx context.Context, req node.ProvisionRequest) (string, error) {
	return "", core.Errorf(core.EQUOTA, "location %s is static: Shoal starts no machines there; add one with `shoal compute add-node` and run the printed command on it", p.Location)
}

// Release does nothing: a machine joined by hand is its owner's; its
// agent exits when the server tells it the node was removed.
func (p *Provider) Release(ctx context.Context, n *node.Node) error { return nil }

// Alive reports false: the provider started nothing. Nodes joined by hand
// prove they live by their agents' heartbeats.
func (p *Provider) Alive(ctx context.Context, n *node.Node) (bool, error) { return false, nil }
