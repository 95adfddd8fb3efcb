package agentapi

import (
	"context"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/store"
)

// A parked sync: a wake with no news parks it again, a wake that comes
// before Await is not lost, and the answer comes once.
func TestParkedSync(t *testing.T) {
	ctx := context.Background()
	db := storeWithIdleNodes(t, "n1")
	s := New(Config{Store: db})
	type answer struct {
		resp *node.AgentSyncResponse
		err  error
	}
	await := func(p *ParkedSync) chan answer {
		ch := make(chan answer, 2) // a second answer would be a bug
		p.Await(func(resp *node.AgentSyncResponse, err error) { ch <- answer{resp, err} })
		return ch
	}

	// Nothing to say: parked; a wake without news parks it again; the
	// deadline answers.
	began := time.Now()
	resp, p, err := s.BeginSync(ctx, "n1", &node.AgentSyncRequest{}, 600*time.Millisecond)
	if err != nil || resp != nil || p == nil {
		t.Fatalf("an idle node's sync: %+v, parked %v, err %v; want it parked", resp, p != nil, err)
	}
	ch := await(p)
	s.wakes.Wake("n1")
	select {
	case a := <-ch:
		if took := time.Since(began); a.err != nil || a.resp.Exit || took < 500*time.Millisecond {
			t.Fatalf("answer %+v, err %v after %s; want the empty answer at the deadline", a.resp, a.err, took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a parked sync was not answered at its deadline")
	}

	// A wake between BeginSync and Await, with news (the node is
	// leaving): answered at once, and once.
	_, p, err = s.BeginSync(ctx, "n1", &node.AgentSyncRequest{}, time.Minute)
	if err != nil || p == nil {
		t.Fatalf("second sync: parked %v, err %v", p != nil, err)
	}
	if err := db.Update(ctx, func(tx store.Tx) error {
		n, err := tx.GetNode("n1")
		if err != nil {
			return err
		}
		n.State = node.NodeLeaving
		return tx.UpdateNode(n)
	}); err != nil {
		t.Fatal(err)
	}
	s.wakes.Wake("n1")
	ch = await(p)
	select {
	case a := <-ch:
		if a.err != nil || !a.resp.Exit {
			t.Fatalf("answer %+v, err %v; want exit", a.resp, a.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a wake before Await was lost")
	}
	p.Release() // answered already: nothing more
	select {
	case a := <-ch:
		t.Fatalf("a second answer: %+v", a)
	case <-time.After(100 * time.Millisecond):
	}
}

// A parked sync released before anyone awaits it (a server shutting down
// between parking the connection and waiting on it) does not panic, and
// Await then answers at once, once.
func TestParkedSyncReleasedBeforeAwait(t *testing.T) {
	ctx := context.Background()
	db := storeWithIdleNodes(t, "n1")
	s := New(Config{Store: db})
	_, p, err := s.BeginSync(ctx, "n1", &node.AgentSyncRequest{}, time.Minute)
	if err != nil || p == nil {
		t.Fatalf("an idle node's sync: parked %v, err %v; want it parked", p != nil, err)
	}
	p.Release()
	answers := make(chan *node.AgentSyncResponse, 2)
	p.Await(func(resp *node.AgentSyncResponse, err error) { answers <- resp })
	select {
	case resp := <-answers:
		if resp == nil || resp.Exit {
			t.Fatalf("answer %+v; want the idle node's empty answer", resp)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a sync released before Await was never answered")
	}
	select {
	case <-answers:
		t.Fatal("answered twice")
	case <-time.After(200 * time.Millisecond):
	}
}

// One node parks at most maxParkedPerNode syncs at once; past that its
// syncs are answered at once, and a finished one frees its place.
func TestParkedSyncsPerNodeAreBounded(t *testing.T) {
	ctx := context.Background()
	db := storeWithIdleNodes(t, "n1")
	s := New(Config{Store: db})
	var parked []*ParkedSync
	for i := range maxParkedPerNode + 1 {
		resp, p, err := s.BeginSync(ctx, "n1", &node.AgentSyncRequest{}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case i < maxParkedPerNode && p == nil:
			t.Fatalf("sync %d was answered at once; want it parked", i+1)
		case i == maxParkedPerNode && (p != nil || resp == nil):
			t.Fatalf("sync %d was parked beside %d others; want it answered at once", i+1, maxParkedPerNode)
		}
		if p != nil {
			parked = append(parked, p)
		}
	}
	answered := make(chan struct{}, 1)
	parked[0].Await(func(*node.AgentSyncResponse, error) { answered <- struct{}{} })
	parked[0].Release()
	<-answered
	if _, p, err := s.BeginSync(ctx, "n1", &node.AgentSyncRequest{}, time.Minute); err != nil || p == nil {
		t.Fatalf("after one was answered, a sync was not parked (err %v)", err)
	} else {
		parked = append(parked, p)
	}
	for _, p := range parked[1:] {
		p.Release()
	}
}

// storeWithIdleNodes returns a test store holding idle nodes of these IDs.
func storeWithIdleNodes(t testing.TB, ids ...string) store.Store {
	t.Helper()
	db, _ := teststore.Open(t)
	if err := db.Update(context.Background(), func(tx store.Tx) error {
		for _, id := range ids {
			if err := tx.InsertNode(&node.Node{ID: id, Workspace: "ws", Compute: "cpu", Location: "local", State: node.NodeIdle,
				CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return db
}

// A parked sync keeps its node's principal, not its request's context:
// 10,000 parked syncs each holding a request's chain of values and
// cancellations were some 10 MB of a server's heap. The request's
// values become garbage while the sync waits, and a recheck still acts
// as the node.
func TestParkedSyncKeepsNoRequestContext(t *testing.T) {
	db := storeWithIdleNodes(t, "n1")
	s := New(Config{Store: db})
	type requestValue struct{ payload [4096]byte }
	type key struct{}
	who := &identity.Principal{ID: "node:n1", Name: "node n1", Kind: identity.PrincipalNode}
	v := &requestValue{}
	gone := weak.Make(v)
	reqCtx, cancel := context.WithCancel(identity.WithPrincipal(context.WithValue(context.Background(), key{}, v), who))
	_, p, err := s.BeginSync(reqCtx, "n1", &node.AgentSyncRequest{}, time.Minute)
	if err != nil || p == nil {
		t.Fatalf("an idle node's sync: parked %v, err %v; want it parked", p != nil, err)
	}
	cancel()
	reqCtx, v = nil, nil
	for range 3 {
		runtime.GC()
	}
	if gone.Value() != nil {
		t.Error("a parked sync keeps its request's context (and its values) alive")
	}
	if p.who != who {
		t.Errorf("a parked sync acts as %v, want the request's principal", p.who)
	}
	answers := make(chan *node.AgentSyncResponse, 1)
	p.Await(func(resp *node.AgentSyncResponse, err error) { answers <- resp })
	s.wakes.Wake("n1") // a recheck, without news: still parked
	p.Release()
	if resp := <-answers; resp == nil || resp.Exit {
		t.Fatalf("answer %+v; want the idle node's empty answer", resp)
	}
	runtime.KeepAlive(p)
}
