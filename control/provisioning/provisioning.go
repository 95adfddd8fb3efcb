// Package provisioning asks a location's provider for a node the store
// already holds and records the outcome. Clusters' scale-up
// (control/scaling) and instances' starts (control/instances) provision
// through it alike, so both keep the one rule that matters most: a
// machine whose reference the store cannot record is released, never
// left running where nothing can reach or stop it.
package provisioning

import (
	"context"
	"log/slog"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
	nodekind "github.com/shoal-ml/shoal/domain/node"
	storekind "github.com/shoal-ml/shoal/store"
)

// Request is one stored node to ask its provider for.
type Request struct {
	// Provider is the node's location's provider; nil when this server
	// has none by that name, which fails the node.
	Provider  nodekind.Provider
	Location  *catalog.Location
	Node      *nodekind.Node
	JoinToken string
	ServerURL string
	ServerCA  []byte
	// Image is the one image the node runs where nodes are containers
	// (Node.Image); "" elsewhere.
	Image string
	// Failed records, in tx, that the node could not be had (n is the
	// node as stored now): the caller marks it unusable, or deletes it
	// and fails what waited for it.
	Failed func(tx storekind.Tx, n *nodekind.Node, cause error) error
}

// Provision asks the provider for r.Node and records the outcome: the
// provider's reference on the node, or r.Failed. It returns the
// provider's error (nil when the machine was made) and the store's. When
// the reference cannot be recorded (after a few tries: a transient store
// error must not orphan a machine), the machine is released: chaos runs
// found a node whose reference was lost keep running a job the server
// had requeued elsewhere.
func Provision(ctx context.Context, store storekind.Store, log *slog.Logger, r Request) (perr, err error) {
	var ref string
	if r.Provider == nil {
		perr = core.Errorf(core.ENOTIMPLEMENTED, "no provider %q in this server", r.Location.Provider)
	} else {
		ref, perr = r.Provider.Provision(ctx, nodekind.ProvisionRequest{Node: r.Node, JoinToken: r.JoinToken, ServerURL: r.ServerURL, ServerCA: r.ServerCA, Delay: r.Location.ProvisioningDelay,
			Image: r.Image, InstanceType: r.Location.Kubernetes.InstanceTypeOfSize(r.Node.Size)})
	}
	err = record(ctx, store, func(tx storekind.Tx) error {
		n, err := tx.GetNode(r.Node.ID)
		if err != nil {
			return err
		}
		if perr != nil {
			return r.Failed(tx, n, perr)
		}
		n.ProviderRef = ref
		return tx.UpdateNode(n)
	})
	if err != nil && perr == nil && r.Provider != nil {
		// ENOTFOUND too: the node was deleted meanwhile (its compute or
		// instance went away), and the machine with it.
		stopped := *r.Node
		stopped.ProviderRef = ref
		if rerr := r.Provider.Release(context.WithoutCancel(ctx), &stopped); rerr != nil {
			log.Error("releasing a node whose reference could not be recorded failed", slog.String("node", r.Node.ID), slog.Any("err", rerr))
		}
	}
	if core.ErrorCode(err) == core.ENOTFOUND {
		err = nil
	}
	return perr, err
}

// record writes a provisioning's outcome, retrying transient store errors
// a few times: a node whose provider reference is not recorded cannot be
// released.
func record(ctx context.Context, store storekind.Store, fn func(tx storekind.Tx) error) error {
	var err error
	for try, wait := 0, 20*time.Millisecond; try < 5; try, wait = try+1, wait*2 {
		if err = store.Update(ctx, fn); err == nil || core.ErrorCode(err) == core.ENOTFOUND {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
	return err
}
