package container

import (
	"context"

	"github.com/docker/docker/api/types/network"
)

// Networker is an optional Runtime capability: container networks of the
// engine's own, which a compute's subnet maps to.
type Networker interface {
	// EnsureNetwork creates the bridge network name unless it exists;
	// internal: no route off the host. An existing network is used as it
	// is (its internal flag is the hash's: the same subnet asks the same).
	EnsureNetwork(ctx context.Context, name string, internal bool, labels map[string]string) error
	// RemoveNetwork removes a network no container uses; absent is fine.
	RemoveNetwork(ctx context.Context, name string) error
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

// RemoveNetwork implements Networker.
func (e *Engine) RemoveNetwork(ctx context.Context, name string) error {
	err := e.cli.NetworkRemove(ctx, name)
	if err == nil {
		return nil
	}
	if kind := classify("remove network "+name, err); !isKind(kind, ErrNotFound) {
		return kind
	}
	return nil
}
