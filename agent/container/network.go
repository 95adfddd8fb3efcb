package container

import (
	"context"

	"github.com/docker/docker/api/types/network"
)

// Networker is an optional Runtime capability: container networks of the
// engine's own, which a compute's subnet maps to.
//
// There is no removing them. podman keeps its networks' definitions in
// one folder for the whole host (network_config_dir), whatever the image
// store, and refuses to remove a network only while containers of the
// remover's own store use it: a node with a store of its own, or another
// server's node, would remove a network that other nodes' containers
// still run on, and the next container of that subnet would get a new
// one (another bridge and address range) and could not reach them.
// Removed when no container used it, it would still race another node
// that had just ensured it and was starting its container. What stays is
// the network's definition (a small file, one a subnet), which the
// subnet's next container on the host uses again.
type Networker interface {
	// EnsureNetwork creates the bridge network name unless it exists;
	// internal: no route off the host. An existing network is used as it
	// is (its internal flag is the hash's: the same subnet asks the same).
	EnsureNetwork(ctx context.Context, name string, internal bool, labels map[string]string) error
}

var _ Networker = (*Engine)(nil)

// EnsureNetwork implements Networker.
func (e *Engine) EnsureNetwork(ctx context.Context, name string, internal bool, labels map[string]string) error {
	op := "network " + name
	if _, err := e.cli.NetworkInspect(ctx, name, network.InspectOptions{}); err == nil {
		return nil
	} else if kind := classify(op, err); !isKind(kind, ErrNotFound) {
		return kind
	}
	_, err := e.cli.NetworkCreate(ctx, name, network.CreateOptions{Driver: "bridge", Internal: internal, Labels: labels})
	if err != nil {
		// Another rank may have made it meanwhile.
		if _, ierr := e.cli.NetworkInspect(ctx, name, network.InspectOptions{}); ierr == nil {
			return nil
		}
		return classify(op, err)
	}
	return nil
}
