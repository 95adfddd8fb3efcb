// Package fake is a scriptable in-memory shoal.Provider for tests and the
// simulator. It starts nothing: a provisioned node is "alive" until it is
// released or killed, and whoever drives the fake (a test, the simulator)
// takes the provisioning requests with TakeProvisioned and joins the nodes
// itself, honouring Delay with its own clock. It has no goroutines and no
// clock, so it is deterministic.
package fake

import (
	"context"
	"fmt"
	"sync"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
)

// Call is one recorded call to the provider.
type Call struct {
	Method string // "Provision", "Release" or "Alive"
	NodeID string
	Ref    string // the ref returned (Provision) or passed (Release, Alive)
	Err    error  // the error returned
}

// Provisioned is one successful Provision: the request and the ref given.
type Provisioned struct {
	Ref string
	Req node.ProvisionRequest
}

// Provider is the fake provider. The hooks may be set before the provider
// is used; they are called without the provider's lock held, so they may
// call its methods.
type Provider struct {
	// OnProvision, when set, is called first by Provision; a non-nil error
	// (for example OutOfCapacity) is returned and nothing is provisioned.
	OnProvision func(req node.ProvisionRequest) error
	// OnRelease, when set, is called by Release for an alive node; a
	// non-nil error is returned and the node stays alive.
	OnRelease func(node *node.Node) error

	mu    sync.Mutex
	seq   int
	calls []Call
	nodes map[string]*fakeNode // by ref
	order []string             // refs in provisioning order
	prov  []Provisioned
	taken int // prov[:taken] were handed out by TakeProvisioned
}

type fakeNode struct {
	id    string
	alive bool
}

var _ node.Provider = (*Provider)(nil)

// New returns an empty fake provider.
func New() *Provider {
	return &Provider{nodes: make(map[string]*fakeNode)}
}

// OutOfCapacity returns the error a cloud gives when it has no machine of
// the requested size: EQUOTA saying so. Return it from OnProvision.
func OutOfCapacity(req node.ProvisionRequest) error {
	size, loc := "", ""
	if req.Node != nil {
		size, loc = req.Node.Size, req.Node.Location
	}
	return core.Errorf(core.EQUOTA, "out of capacity: no %s nodes available in %s", size, loc)
}

// Name returns "fake".
func (p *Provider) Name() string { return "fake" }

// Provision records req and returns a new ref ("fake-1", "fake-2", ...);
// the node is alive from then on. It fails with ctx's error if ctx is done,
// or with OnProvision's error.
func (p *Provider) Provision(ctx context.Context, req node.ProvisionRequest) (string, error) {
	id := ""
	if req.Node != nil {
		id = req.Node.ID
	}
	err := ctx.Err()
	if err == nil && req.Node == nil {
		err = core.Errorf(core.EINVALID, "provision: no node given")
	}
	if err == nil && p.OnProvision != nil {
		err = p.OnProvision(req)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.calls = append(p.calls, Call{Method: "Provision", NodeID: id, Err: err})
		return "", err
	}
	p.seq++
	ref := fmt.Sprintf("fake-%d", p.seq)
	p.nodes[ref] = &fakeNode{id: id, alive: true}
	p.order = append(p.order, ref)
	p.prov = append(p.prov, Provisioned{Ref: ref, Req: req})
	p.calls = append(p.calls, Call{Method: "Provision", NodeID: id, Ref: ref})
	return ref, nil
}

// Release marks the node gone. Unknown and already gone nodes return nil.
func (p *Provider) Release(ctx context.Context, node *node.Node) error {
	if node == nil {
		return nil
	}
	ref := node.ProviderRef
	var err error
	if p.OnRelease != nil && p.alive(ref) {
		err = p.OnRelease(node)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := p.nodes[ref]; n != nil && err == nil {
		n.alive = false
	}
	p.calls = append(p.calls, Call{Method: "Release", NodeID: node.ID, Ref: ref, Err: err})
	return err
}

// Alive reports whether the node was provisioned and neither released nor
// killed.
func (p *Provider) Alive(ctx context.Context, node *node.Node) (bool, error) {
	if node == nil {
		return false, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.nodes[node.ProviderRef]
	alive := n != nil && n.alive && n.id == node.ID
	p.calls = append(p.calls, Call{Method: "Alive", NodeID: node.ID, Ref: node.ProviderRef})
	return alive, nil
}

func (p *Provider) alive(ref string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.nodes[ref]
	return n != nil && n.alive
}

// Kill makes the node under ref vanish, as a machine that died or was
// preempted: Alive reports false from then on. Unknown refs are ignored.
func (p *Provider) Kill(ref string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := p.nodes[ref]; n != nil {
		n.alive = false
	}
}

// Nodes returns the refs of the alive nodes, in provisioning order.
func (p *Provider) Nodes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var refs []string
	for _, ref := range p.order {
		if p.nodes[ref].alive {
			refs = append(refs, ref)
		}
	}
	return refs
}

// Calls returns a copy of every call made so far, in order.
func (p *Provider) Calls() []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Call(nil), p.calls...)
}

// Provisioned returns every successful Provision so far, in order.
func (p *Provider) Provisioned() []Provisioned {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Provisioned(nil), p.prov...)
}

// TakeProvisioned returns the successful Provisions made since the last
// call, in order, so that a test or the simulator can join those nodes.
func (p *Provider) TakeProvisioned() []Provisioned {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := append([]Provisioned(nil), p.prov[p.taken:]...)
	p.taken = len(p.prov)
	return out
}
