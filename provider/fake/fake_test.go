package fake_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/provider/fake"
	"github.com/shoal-ml/shoal/provider/providertest"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, providertest.Harness{
		New:     func(t *testing.T) node.Provider { return fake.New() },
		Started: func(t *testing.T, p node.Provider, ref string) bool { return true },
	})
}

func TestOutOfCapacity(t *testing.T) {
	ctx := context.Background()
	p := fake.New()
	full := true
	p.OnProvision = func(req node.ProvisionRequest) error {
		if full {
			return fake.OutOfCapacity(req)
		}
		return nil
	}
	node := providertest.NewNode("n1")
	_, err := p.Provision(ctx, providertest.NewRequest(node))
	if core.ErrorCode(err) != core.EQUOTA {
		t.Fatalf("Provision when full: %v, want EQUOTA", err)
	}
	if got := p.Nodes(); len(got) != 0 {
		t.Fatalf("Nodes() = %v after a refused Provision", got)
	}
	full = false
	ref, err := p.Provision(ctx, providertest.NewRequest(node))
	if err != nil || ref != "fake-1" {
		t.Fatalf("Provision = %q, %v; want fake-1, nil", ref, err)
	}
	calls := p.Calls()
	if len(calls) != 2 || calls[0].Err == nil || calls[1].Ref != "fake-1" || calls[1].NodeID != "n1" {
		t.Fatalf("Calls() = %+v", calls)
	}
}

func TestKillAndNodes(t *testing.T) {
	ctx := context.Background()
	p := fake.New()
	var nodes []*node.Node
	for _, id := range []string{"a", "b", "c"} {
		node := providertest.NewNode(id)
		ref, err := p.Provision(ctx, providertest.NewRequest(node))
		if err != nil {
			t.Fatal(err)
		}
		node.ProviderRef = ref
		nodes = append(nodes, node)
	}
	if got, want := p.Nodes(), []string{"fake-1", "fake-2", "fake-3"}; !slices.Equal(got, want) {
		t.Fatalf("Nodes() = %v, want %v", got, want)
	}
	p.Kill("fake-2")
	p.Kill("no-such-ref")
	providertest.MustAlive(t, p, nodes[1], false)
	providertest.MustAlive(t, p, nodes[0], true)
	if got, want := p.Nodes(), []string{"fake-1", "fake-3"}; !slices.Equal(got, want) {
		t.Fatalf("Nodes() after Kill = %v, want %v", got, want)
	}
	providertest.MustRelease(t, p, nodes[1]) // gone already: nil
	providertest.MustRelease(t, p, nodes[2])
	if got, want := p.Nodes(), []string{"fake-1"}; !slices.Equal(got, want) {
		t.Fatalf("Nodes() after Release = %v, want %v", got, want)
	}
	// The ref alone does not make a node alive: the ID must match.
	other := providertest.NewNode("z")
	other.ProviderRef = "fake-1"
	providertest.MustAlive(t, p, other, false)
}

func TestTakeProvisioned(t *testing.T) {
	ctx := context.Background()
	p := fake.New()
	if got := p.TakeProvisioned(); len(got) != 0 {
		t.Fatalf("TakeProvisioned() on a new provider = %v", got)
	}
	for _, id := range []string{"a", "b"} {
		req := providertest.NewRequest(providertest.NewNode(id))
		if _, err := p.Provision(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	got := p.TakeProvisioned()
	if len(got) != 2 || got[0].Ref != "fake-1" || got[1].Req.Node.ID != "b" || got[1].Req.JoinToken != "join-token-b" {
		t.Fatalf("TakeProvisioned() = %+v", got)
	}
	if got := p.TakeProvisioned(); len(got) != 0 {
		t.Fatalf("second TakeProvisioned() = %+v, want none", got)
	}
	if _, err := p.Provision(ctx, providertest.NewRequest(providertest.NewNode("c"))); err != nil {
		t.Fatal(err)
	}
	if got := p.TakeProvisioned(); len(got) != 1 || got[0].Ref != "fake-3" {
		t.Fatalf("TakeProvisioned() = %+v, want fake-3", got)
	}
	if got := p.Provisioned(); len(got) != 3 {
		t.Fatalf("Provisioned() has %d entries, want 3", len(got))
	}
}

func TestCancelledContextFails(t *testing.T) {
	p := fake.New()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Provision(ctx, providertest.NewRequest(providertest.NewNode("a"))); !errors.Is(err, context.Canceled) {
		t.Fatalf("Provision with a cancelled context: %v, want context.Canceled", err)
	}
	if len(p.Provisioned()) != 0 {
		t.Fatal("a cancelled Provision was recorded as provisioned")
	}
}

func TestReleaseFailure(t *testing.T) {
	ctx := context.Background()
	p := fake.New()
	boom := errors.New("boom")
	p.OnRelease = func(*node.Node) error { return boom }
	node := providertest.NewNode("a")
	ref, err := p.Provision(ctx, providertest.NewRequest(node))
	if err != nil {
		t.Fatal(err)
	}
	node.ProviderRef = ref
	if err := p.Release(ctx, node); !errors.Is(err, boom) {
		t.Fatalf("Release = %v, want the hook's error", err)
	}
	providertest.MustAlive(t, p, node, true)
	p.OnRelease = nil
	providertest.MustRelease(t, p, node)
	providertest.MustAlive(t, p, node, false)
}
