package api_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/api"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/control"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/tlsconf"
)

// countingListener counts the connections it accepted.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// waitParked waits until n syncs are parked.
func waitParked(t *testing.T, pk *api.Parking, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); pk.Parked() != n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d syncs parked, want %d", pk.Parked(), n)
		}
	}
}

// TestParkedSyncs: a sync with nothing to say is parked off its handler
// (api.Parking) and answered at its deadline, or at once when its node is
// woken with work; the agent keeps one connection throughout; closing the
// listener answers the syncs still parked.
func TestParkedSyncs(t *testing.T) {
	e := newTestEnv(t)
	_, cred := joinNode(t, e)
	ts := httptest.NewUnstartedServer(e.srv)
	counted := &countingListener{Listener: ts.Listener}
	pk := api.NewParking(counted)
	ts.Listener = pk
	e.srv.SetParking(pk)
	ts.Start()
	defer ts.Close()
	a := client.NewAgentClient(ts.URL, cred)
	ctx := context.Background()

	// Nothing to do: answered at the end of the wait, parked meanwhile.
	type answer struct {
		resp *node.AgentSyncResponse
		err  error
		took time.Duration
	}
	var running []node.RankRef
	syncAsync := func(wait time.Duration) chan answer {
		ch := make(chan answer, 1)
		req := &node.AgentSyncRequest{Running: running}
		go func() {
			began := time.Now()
			resp, err := a.Sync(ctx, req, wait)
			ch <- answer{resp, err, time.Since(began)}
		}()
		return ch
	}
	ch := syncAsync(time.Second)
	waitParked(t, pk, 1)
	got := <-ch
	if got.err != nil || len(got.resp.Start) > 0 || got.took < 900*time.Millisecond {
		t.Fatalf("an idle node's sync: %+v, err %v, after %s; want an empty answer after its 1 s wait", got.resp, got.err, got.took)
	}
	if got.resp.LeaseExpires.IsZero() {
		t.Error("the parked answer carries no lease")
	}
	if pk.Parked() != 0 {
		t.Errorf("%d syncs still parked after the answer", pk.Parked())
	}

	// Work placed on the node wakes its parked sync at once.
	ch = syncAsync(20 * time.Second)
	waitParked(t, pk, 1)
	ctrl := control.New(e.svc, 1)
	if err := ctrl.RunOnce(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	ctrl.Wait()
	select {
	case got = <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("a parked sync was not answered when its node was given work")
	}
	if got.err != nil || len(got.resp.Start) != 1 || got.resp.Start[0].JobName != "j-gpu" {
		t.Fatalf("the woken sync: %+v, err %v; want j-gpu's rank to start", got.resp, got.err)
	}

	// Every sync went over the agent's one connection, handed back to
	// net/http after each parked answer.
	running = []node.RankRef{got.resp.Start[0].RankRef}
	if _, err := a.Sync(ctx, &node.AgentSyncRequest{Running: running}, 0); err != nil {
		t.Fatal(err)
	}
	if n := counted.n.Load(); n != 1 {
		t.Errorf("the agent's syncs took %d connections, want 1", n)
	}

	// Closing the listener (a shutdown) answers a parked sync at once
	// (the agent runs its rank: nothing to say).
	ch = syncAsync(20 * time.Second)
	waitParked(t, pk, 1)
	pk.Close()
	select {
	case got = <-ch:
		if got.err != nil {
			t.Errorf("a sync parked at shutdown: %v, want its answer", got.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("closing the listener did not answer the parked sync")
	}
}

// TestParkedSyncsOverTLS: as the server serves HTTPS (the Parking over the
// TLS listener), a parked connection is handed back as the *tls.Conn it
// is and the agent's next sync goes over it.
func TestParkedSyncsOverTLS(t *testing.T) {
	e := newTestEnv(t)
	_, cred := joinNode(t, e)
	cert, caPEM, err := tlsconf.SelfSigned(t.TempDir(), []string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingListener{Listener: ln}
	pk := api.NewParking(tls.NewListener(counted, &tls.Config{Certificates: []tls.Certificate{cert}}))
	e.srv.SetParking(pk)
	hs := &http.Server{Handler: e.srv}
	go hs.Serve(pk)
	defer hs.Close()
	a := client.NewAgentClient("https://"+ln.Addr().String(), cred)
	if err := a.TrustCA(caPEM); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		done := make(chan error, 1)
		go func() {
			_, err := a.Sync(context.Background(), &node.AgentSyncRequest{}, 300*time.Millisecond)
			done <- err
		}()
		waitParked(t, pk, 1)
		if err := <-done; err != nil {
			t.Fatalf("sync %d over TLS: %v", i, err)
		}
	}
	if n := counted.n.Load(); n != 1 {
		t.Errorf("three syncs over TLS took %d connections, want 1", n)
	}
}

// TestQueuedSyncs: a sync that finds every slot taken (the store fell
// behind) waits off net/http in the queue, is computed when a slot frees,
// parked, and answered; the agent keeps its one connection.
func TestQueuedSyncs(t *testing.T) {
	e := newTestEnv(t)
	_, cred := joinNode(t, e)
	take, release, queued := e.srv.SetSyncSlots(1)
	ts := httptest.NewUnstartedServer(e.srv)
	counted := &countingListener{Listener: ts.Listener}
	pk := api.NewParking(counted)
	ts.Listener = pk
	e.srv.SetParking(pk)
	ts.Start()
	defer ts.Close()
	a := client.NewAgentClient(ts.URL, cred)
	for i := range 2 {
		if !take() {
			t.Fatal("the only slot is taken before the sync")
		}
		done := make(chan error, 1)
		go func() {
			_, err := a.Sync(context.Background(), &node.AgentSyncRequest{}, 300*time.Millisecond)
			done <- err
		}()
		for deadline := time.Now().Add(5 * time.Second); queued() != 1; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("sync %d: %d syncs queued, want 1", i, queued())
			}
		}
		if pk.Parked() != 0 {
			t.Fatalf("sync %d was parked before it was computed", i)
		}
		release() // the slot goes to the queued sync
		waitParked(t, pk, 1)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("queued sync %d: %v", i, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("queued sync %d was not answered", i)
		}
	}
	if n := counted.n.Load(); n != 1 {
		t.Errorf("two queued syncs took %d connections, want 1", n)
	}
	if !take() {
		t.Error("the slot was not freed after the queued syncs were computed")
	}
}
