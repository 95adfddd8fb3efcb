package provisioning

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/provider/fake"
)

// failingStore refuses every write once armed, as a store that went away
// between the node's insert and the provider's answer.
type failingStore struct {
	shoal.Store
	armed bool
}

func (f *failingStore) Update(ctx context.Context, fn func(tx shoal.Tx) error) error {
	if f.armed {
		return shoal.Errorf(shoal.EUNAVAILABLE, "the store is unreachable")
	}
	return f.Store.Update(ctx, fn)
}

func setup(t *testing.T) (*failingStore, *shoal.Node, *shoal.Location) {
	db, _ := teststore.Open(t)
	n := &shoal.Node{ID: "c-n1", Workspace: "ws", Compute: "c", Location: "local", State: shoal.NodePreparing, Version: 1}
	if err := db.Update(context.Background(), func(tx shoal.Tx) error {
		n.CreatedOn, n.LastHeartbeat = tx.Now(), tx.Now()
		return tx.InsertNode(n)
	}); err != nil {
		t.Fatal(err)
	}
	return &failingStore{Store: db}, n, &shoal.Location{Name: "local", Provider: "fake"}
}

func node(t *testing.T, s shoal.Store, id string) *shoal.Node {
	var n *shoal.Node
	if err := s.View(context.Background(), func(tx shoal.Tx) (err error) { n, err = tx.GetNode(id); return }); err != nil {
		t.Fatal(err)
	}
	return n
}

func noFailure(t *testing.T) func(shoal.Tx, *shoal.Node, error) error {
	return func(shoal.Tx, *shoal.Node, error) error {
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
	p.OnProvision = func(shoal.ProvisionRequest) error { s.armed = true; return nil }
	perr, err := Provision(context.Background(), s, slog.New(slog.DiscardHandler), Request{Provider: p, Location: loc, Node: n, JoinToken: "tok", Failed: noFailure(t)})
	if perr != nil {
		t.Fatalf("provider error %v, want none", perr)
	}
	if shoal.ErrorCode(err) != shoal.EUNAVAILABLE {
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
		Failed: func(tx shoal.Tx, n *shoal.Node, c error) error {
			cause = c
			n.State = shoal.NodeUnusable
			return tx.UpdateNode(n)
		}})
	if err != nil || shoal.ErrorCode(perr) != shoal.EQUOTA || !errors.Is(cause, perr) {
		t.Fatalf("perr %v err %v cause %v", perr, err, cause)
	}
	if got := node(t, s, n.ID).State; got != shoal.NodeUnusable {
		t.Errorf("state %s, want unusable", got)
	}
}

// A location whose provider this server lacks fails the node, naming it.
func TestProvisionWithoutAProvider(t *testing.T) {
	s, n, loc := setup(t)
	called := false
	perr, err := Provision(context.Background(), s, slog.New(slog.DiscardHandler), Request{Location: loc, Node: n,
		Failed: func(tx shoal.Tx, n *shoal.Node, c error) error { called = true; return tx.DeleteNode(n.ID) }})
	if err != nil || shoal.ErrorCode(perr) != shoal.ENOTIMPLEMENTED || !called {
		t.Fatalf("perr %v err %v called %v", perr, err, called)
	}
}
