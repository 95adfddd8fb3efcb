package provisioning

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
	nodekind "github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/provider/fake"
	"github.com/shoal-ml/shoal/store"
)

// failingStore refuses every write once armed, as a store that went away
// between the node's insert and the provider's answer.
type failingStore struct {
	store.Store
	armed bool
}

func (f *failingStore) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	if f.armed {
		return core.Errorf(core.EUNAVAILABLE, "the store is unreachable")
	}
	return f.Store.Update(ctx, fn)
}

func setup(t *testing.T) (*failingStore, *nodekind.Node, *catalog.Location) {
	db, _ := teststore.Open(t)
	n := &nodekind.Node{ID: "c-n1", Workspace: "ws", Compute: "c", Location: "local", State: nodekind.NodePreparing, Version: 1}
	if err := db.Update(context.Background(), func(tx store.Tx) error {
		n.CreatedOn, n.LastHeartbeat = tx.Now(), tx.Now()
		return tx.InsertNode(n)
	}); err != nil {
		t.Fatal(err)
	}
	return &failingStore{Store: db}, n, &catalog.Location{Name: "local", Provider: "fake"}
}

func node(t *testing.T, s store.Store, id string) *nodekind.Node {
	var n *nodekind.Node
	if err := s.View(context.Background(), func(tx store.Tx) (err error) { n, err = tx.GetNode(id); return }); err != nil {
		t.Fatal(err)
	}
	return n
}

func noFailure(t *testing.T) func(store.Tx, *nodekind.Node, error) error {
	return func(store.Tx, *nodekind.Node, error) error {
		t.Error("Failed called for a node that was made")
		return nil
	}
}

// A machine made is recorded on its node.
func TestProvisionRecordsTheReference(t *testing.T) {
	s, n, loc := setup(t)
	p := fake.New()
	perr, err := Provision(context.Background(), s, slog.New(slog.DiscardHandler), Request{Provider: p, Location: loc, Node: n, JoinToken: "tok", Failed: noFailure(t)})
	if perr != nil || err != nil {
		t.Fatal(perr, err)
	}
	if got := node(t, s, n.ID).ProviderRef; got != "fake-1" {
		t.Errorf("ProviderRef = %q, want fake-1", got)
	}
	if got := p.Nodes(); len(got) != 1 {
		t.Errorf("alive machines = %v, want one", got)
	}
}

// A machine whose reference cannot be recorded is released: nothing could
// reach or stop it otherwise. Clusters did this and instances did not.
func TestProvisionReleasesWhatItCannotRecord(t *testing.T) {
	s, n, loc := setup(t)
	p := fake.New()
	p.OnProvision = func(nodekind.ProvisionRequest) error { s.armed = true; return nil }
	perr, err := Provision(context.Background(), s, slog.New(slog.DiscardHandler), Request{Provider: p, Location: loc, Node: n, JoinToken: "tok", Failed: noFailure(t)})
	if perr != nil {
		t.Fatalf("provider error %v, want none", perr)
	}
	if core.ErrorCode(err) != core.EUNAVAILABLE {
		t.Errorf("store error %v, want the store's", err)
	}
	if got := p.Nodes(); len(got) != 0 {
		t.Errorf("machines still alive after the reference was lost: %v", got)
	}
}

// A provider's refusal goes to Failed in the same write, with its words.
func TestProvisionRecordsTheRefusal(t *testing.T) {
	s, n, loc := setup(t)
	p := fake.New()
	p.OnProvision = fake.OutOfCapacity
	var cause error
	perr, err := Provision(context.Background(), s, slog.New(slog.DiscardHandler), Request{Provider: p, Location: loc, Node: n, JoinToken: "tok",
		Failed: func(tx store.Tx, n *nodekind.Node, c error) error {
			cause = c
			n.State = nodekind.NodeUnusable
			return tx.UpdateNode(n)
		}})
	if err != nil || core.ErrorCode(perr) != core.EQUOTA || !errors.Is(cause, perr) {
		t.Fatalf("perr %v err %v cause %v", perr, err, cause)
	}
	if got := node(t, s, n.ID).State; got != nodekind.NodeUnusable {
		t.Errorf("state %s, want unusable", got)
	}
}

// A location whose provider this server lacks fails the node, naming it.
func TestProvisionWithoutAProvider(t *testing.T) {
	s, n, loc := setup(t)
	called := false
	perr, err := Provision(context.Background(), s, slog.New(slog.DiscardHandler), Request{Location: loc, Node: n,
		Failed: func(tx store.Tx, n *nodekind.Node, c error) error { called = true; return tx.DeleteNode(n.ID) }})
	if err != nil || core.ErrorCode(perr) != core.ENOTIMPLEMENTED || !called {
		t.Fatalf("perr %v err %v called %v", perr, err, called)
	}
}
