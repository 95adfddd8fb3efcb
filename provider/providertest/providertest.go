// Package providertest is the conformance suite every shoal.Provider passes.
// A provider's tests call Run with a Harness:
//
//	func TestConformance(t *testing.T) {
//		providertest.Run(t, providertest.Harness{New: ..., Started: ...})
//	}
package providertest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	nodekind "github.com/shoal-ml/shoal/domain/node"
)

// Harness adapts a provider to the suite.
type Harness struct {
	// New returns a fresh provider; it registers its own cleanup with t
	// (stopping whatever nodes the test left running).
	New func(t *testing.T) nodekind.Provider
	// Started waits until the node provisioned under ref has started (for
	// local: its agent process exists; for fake: at once) and reports true,
	// or false on timeout.
	Started func(t *testing.T, p nodekind.Provider, ref string) bool
}

// Run runs the suite against the provider h makes.
func Run(t *testing.T, h Harness) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, h Harness)
	}{
		{"Name", testName},
		{"ProvisionAlive", testProvisionAlive},
		{"ReleaseNotAlive", testReleaseNotAlive},
		{"ReleaseIdempotent", testReleaseIdempotent},
		{"ReleaseUnknown", testReleaseUnknown},
		{"AliveUnknown", testAliveUnknown},
		{"CancelledContext", testCancelledContext},
		{"ReleaseOnlyThatNode", testReleaseOnlyThatNode},
		{"ConcurrentProvision", testConcurrentProvision},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, h) })
	}
}

// NewNode returns a node as the server hands it to a provider.
func NewNode(id string) *nodekind.Node {
	return &nodekind.Node{
		ID:        id,
		Workspace: "ws",
		Compute:   "cpu-cluster",
		Location:  "local",
		Size:      "Standard_DS3_v2",
		Family:    "standardDSv2Family",
		VCPUs:     4,
		State:     nodekind.NodePreparing,
	}
}

// NewRequest returns a provisioning request, without delay, for node.
func NewRequest(node *nodekind.Node) nodekind.ProvisionRequest {
	return nodekind.ProvisionRequest{
		Node:      node,
		JoinToken: "join-token-" + node.ID,
		ServerURL: "http://127.0.0.1:1",
	}
}

// MustProvision provisions a node named id, sets its ProviderRef and waits
// until it has started.
func MustProvision(t *testing.T, h Harness, p nodekind.Provider, id string) *nodekind.Node {
	t.Helper()
	node := NewNode(id)
	ref, err := p.Provision(context.Background(), NewRequest(node))
	if err != nil {
		t.Fatalf("Provision(%s): %v", id, err)
	}
	if ref == "" {
		t.Fatalf("Provision(%s) returned an empty ref", id)
	}
	node.ProviderRef = ref
	if !h.Started(t, p, ref) {
		t.Fatalf("node %s (ref %q) did not start", id, ref)
	}
	return node
}

// MustAlive fails t unless Alive(node) is want without error.
func MustAlive(t *testing.T, p nodekind.Provider, node *nodekind.Node, want bool) {
	t.Helper()
	got, err := p.Alive(context.Background(), node)
	if err != nil {
		t.Fatalf("Alive(%s): %v", node.ID, err)
	}
	if got != want {
		t.Fatalf("Alive(%s) = %v, want %v", node.ID, got, want)
	}
}

// MustRelease fails t unless Release(node) returns nil.
func MustRelease(t *testing.T, p nodekind.Provider, node *nodekind.Node) {
	t.Helper()
	if err := p.Release(context.Background(), node); err != nil {
		t.Fatalf("Release(%s): %v", node.ID, err)
	}
}

func testName(t *testing.T, h Harness) {
	if h.New(t).Name() == "" {
		t.Fatal("Name() is empty")
	}
}

func testProvisionAlive(t *testing.T, h Harness) {
	p := h.New(t)
	node := MustProvision(t, h, p, "ptest-alive")
	MustAlive(t, p, node, true)
}

func testReleaseNotAlive(t *testing.T, h Harness) {
	p := h.New(t)
	node := MustProvision(t, h, p, "ptest-release")
	MustRelease(t, p, node)
	MustAlive(t, p, node, false)
}

func testReleaseIdempotent(t *testing.T, h Harness) {
	p := h.New(t)
	node := MustProvision(t, h, p, "ptest-twice")
	MustRelease(t, p, node)
	MustRelease(t, p, node)
	MustAlive(t, p, node, false)
}

func testReleaseUnknown(t *testing.T, h Harness) {
	p := h.New(t)
	noRef := NewNode("ptest-noref")
	MustRelease(t, p, noRef)
	unknown := NewNode("ptest-unknown")
	unknown.ProviderRef = "no-such-ref"
	MustRelease(t, p, unknown)
	if err := p.Release(context.Background(), nil); err != nil {
		t.Fatalf("Release(nil): %v", err)
	}
}

func testAliveUnknown(t *testing.T, h Harness) {
	p := h.New(t)
	MustAlive(t, p, NewNode("ptest-noref"), false)
	unknown := NewNode("ptest-unknown")
	unknown.ProviderRef = "no-such-ref"
	MustAlive(t, p, unknown, false)
	if alive, err := p.Alive(context.Background(), nil); alive || err != nil {
		t.Fatalf("Alive(nil) = %v, %v; want false, nil", alive, err)
	}
}

func testCancelledContext(t *testing.T, h Harness) {
	p := h.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	node := NewNode("ptest-cancelled")
	ref, err := p.Provision(ctx, NewRequest(node))
	if err != nil {
		return // failing is one of the two right answers
	}
	// The other: a ref, but nothing started.
	node.ProviderRef = ref
	MustAlive(t, p, node, false)
	MustRelease(t, p, node)
}

func testReleaseOnlyThatNode(t *testing.T, h Harness) {
	p := h.New(t)
	a := MustProvision(t, h, p, "ptest-a")
	b := MustProvision(t, h, p, "ptest-b")
	if a.ProviderRef == b.ProviderRef {
		t.Fatalf("two nodes share ref %q", a.ProviderRef)
	}
	MustRelease(t, p, a)
	MustAlive(t, p, a, false)
	MustAlive(t, p, b, true)
}

func testConcurrentProvision(t *testing.T, h Harness) {
	p := h.New(t)
	const n = 5
	nodes := make([]*nodekind.Node, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		nodes[i] = NewNode(fmt.Sprintf("ptest-conc-%d", i))
		wg.Go(func() {
			ref, err := p.Provision(context.Background(), NewRequest(nodes[i]))
			nodes[i].ProviderRef, errs[i] = ref, err
		})
	}
	wg.Wait()
	refs := make(map[string]bool)
	for i, node := range nodes {
		if errs[i] != nil {
			t.Fatalf("Provision(%s): %v", node.ID, errs[i])
		}
		if node.ProviderRef == "" || refs[node.ProviderRef] {
			t.Fatalf("Provision(%s) returned ref %q, empty or not unique", node.ID, node.ProviderRef)
		}
		refs[node.ProviderRef] = true
	}
	for _, node := range nodes {
		if !h.Started(t, p, node.ProviderRef) {
			t.Fatalf("node %s did not start", node.ID)
		}
	}
	alive := make([]bool, n)
	for i, node := range nodes {
		wg.Go(func() {
			var err error
			alive[i], err = p.Alive(context.Background(), node)
			errs[i] = err
		})
	}
	wg.Wait()
	for i, node := range nodes {
		if errs[i] != nil || !alive[i] {
			t.Fatalf("Alive(%s) = %v, %v; want true, nil", node.ID, alive[i], errs[i])
		}
	}
	for i, node := range nodes {
		wg.Go(func() { errs[i] = p.Release(context.Background(), node) })
	}
	wg.Wait()
	for i, node := range nodes {
		if errs[i] != nil {
			t.Fatalf("Release(%s): %v", node.ID, errs[i])
		}
		MustAlive(t, p, node, false)
	}
}
