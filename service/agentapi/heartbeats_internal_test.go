package agentapi

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	storekind "github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest"
)

// countingStore counts write transactions; the first waits for hold to
// close, so that the test decides when the others gather (a loaded
// machine may otherwise run 200 goroutines one after another, each
// writing alone).
type countingStore struct {
	storekind.Store
	updates atomic.Int64
	hold    chan struct{}
	held    chan struct{}
}

func (c *countingStore) Update(ctx context.Context, fn func(tx storekind.Tx) error) error {
	if c.updates.Add(1) == 1 && c.hold != nil {
		close(c.held)
		<-c.hold
	}
	return c.Store.Update(ctx, fn)
}

// Heartbeats that arrive together are written together, and every one of
// them is written: concurrent beats of 200 nodes renew all 200 leases in
// fewer transactions than beats; a lone beat is written at once.
func TestHeartbeatsAreGroupCommitted(t *testing.T) {
	ctx := context.Background()
	const nodes = 200
	db, clock := idleNodes(t, nodes)
	store := &countingStore{Store: db, hold: make(chan struct{}), held: make(chan struct{})}
	b := newHeartbeatBatch()
	clock.Advance(time.Minute)
	var wg sync.WaitGroup
	beat := func(i int) {
		defer wg.Done()
		if err := b.beat(ctx, store, fmt.Sprintf("n%d", i), false); err != nil {
			t.Error(err)
		}
	}
	// The first beat writes alone and is held in its write; the others
	// gather meanwhile into the next round, which one transaction writes.
	heldThenGathered(b, store, &wg, beat, nodes-1)
	wg.Wait()
	if n := store.updates.Load(); n != 2 {
		t.Errorf("%d transactions for %d concurrent heartbeats, want 2 (one held, one for the round gathered behind it)", n, nodes)
	}
	want := storetest.Start.Add(time.Minute).Truncate(time.Microsecond)
	err := db.View(ctx, func(tx storekind.Tx) error {
		for i := range nodes {
			n, err := tx.GetNode(fmt.Sprintf("n%d", i))
			if err != nil {
				return err
			}
			if !n.LastHeartbeat.Equal(want) {
				t.Errorf("node %s: lease %v, want %v", n.ID, n.LastHeartbeat, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A lone heartbeat is written before beat returns.
	clock.Advance(time.Minute)
	before := store.updates.Load()
	if err := b.beat(ctx, store, "n7", false); err != nil {
		t.Fatal(err)
	}
	if store.updates.Load() != before+1 {
		t.Fatalf("a lone heartbeat took %d transactions", store.updates.Load()-before)
	}
	db.View(ctx, func(tx storekind.Tx) error {
		n, _ := tx.GetNode("n7")
		if !n.LastHeartbeat.Equal(storetest.Start.Add(2 * time.Minute).Truncate(time.Microsecond)) {
			t.Errorf("lone heartbeat not written: %v", n.LastHeartbeat)
		}
		return nil
	})
}

// gatedStore fails its first write after the gate opens and writes the rest.
type gatedStore struct {
	storekind.Store
	gate    chan struct{}
	entered chan struct{}
	calls   atomic.Int64
}

func (g *gatedStore) Update(ctx context.Context, fn func(tx storekind.Tx) error) error {
	if g.calls.Add(1) == 1 {
		close(g.entered)
		<-g.gate
		return core.Errorf(core.EUNAVAILABLE, "the first write fails")
	}
	return g.Store.Update(ctx, fn)
}

// Heartbeats that arrive while a write is in progress form the next round:
// they wait for their own round's write, are stored when beat returns, and
// do not see the error of the round before.
func TestHeartbeatRoundsKeepTheirOwnResult(t *testing.T) {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	err := db.Update(ctx, func(tx storekind.Tx) error {
		for _, id := range []string{"a", "b", "c"} {
			if err := tx.InsertNode(&node.Node{ID: id, Workspace: "ws", Compute: "cpu", Location: "local", State: node.NodeIdle,
				CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	store := &gatedStore{Store: db, gate: make(chan struct{}), entered: make(chan struct{})}
	b := newHeartbeatBatch()
	first := make(chan error, 1)
	go func() { first <- b.beat(ctx, store, "a", false) }()
	<-store.entered
	later := make(chan error, 2)
	for _, id := range []string{"b", "c"} {
		go func() {
			err := b.beat(ctx, store, id, false)
			if err == nil {
				db.View(ctx, func(tx storekind.Tx) error {
					n, _ := tx.GetNode(id)
					if !n.LastHeartbeat.Equal(storetest.Start.Add(time.Minute).Truncate(time.Microsecond)) {
						err = fmt.Errorf("node %s: beat returned before its lease was written (%v)", id, n.LastHeartbeat)
					}
					return nil
				})
			}
			later <- err
		}()
	}
	// Both have joined the gathering round before the first write ends.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		b.mu.Lock()
		joined := b.next != nil && len(b.next.ids) == 2
		b.mu.Unlock()
		if joined {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the later heartbeats never joined a round")
		}
	}
	close(store.gate)
	if err := <-first; core.ErrorCode(err) != core.EUNAVAILABLE {
		t.Errorf("the failed round's heartbeat: %v, want its error", err)
	}
	for range 2 {
		if err := <-later; err != nil {
			t.Errorf("a later round's heartbeat: %v", err)
		}
	}
	if n := store.calls.Load(); n != 2 {
		t.Errorf("%d writes, want 2 (the failed round, then b and c together)", n)
	}
}

// After a round is written, the next gathers while it cools before it
// writes: heartbeats that come one after another meanwhile share one
// transaction, where each would otherwise begin one as soon as the last
// ended (at 10,000 nodes, a transaction a heartbeat). An urgent beat (its
// sync has a job to hand over) does not wait for the cooling. Every lease
// is written when its beat returns. The cooling lasts an hour here and the
// test ends it, so that no machine's pace decides what gathers.
func TestHeartbeatRoundsGatherWhileTheLastCools(t *testing.T) {
	ctx := context.Background()
	const nodes = 26
	db, clock := idleNodes(t, nodes)
	store := &countingStore{Store: db, hold: make(chan struct{}), held: make(chan struct{})}
	b := newHeartbeatBatch()
	b.coolPer, b.maxCool = time.Hour, time.Hour
	clock.Advance(time.Minute)
	want := storetest.Start.Add(time.Minute).Truncate(time.Microsecond)
	var wg sync.WaitGroup
	beatAs := func(i int, urgent bool) {
		defer wg.Done()
		id := fmt.Sprintf("n%d", i)
		if err := b.beat(ctx, store, id, urgent); err != nil {
			t.Error(err)
			return
		}
		db.View(ctx, func(tx storekind.Tx) error {
			if n, err := tx.GetNode(id); err != nil || !n.LastHeartbeat.Equal(want) {
				t.Errorf("node %s: beat returned before its lease was written (%v, %v)", id, n, err)
			}
			return nil
		})
	}
	beat := func(i int) { beatAs(i, false) }
	// A round of 10, behind a first beat held in its write: the first
	// round's cooling ended by hand, the second's left to run.
	wg.Add(1)
	go beat(0)
	<-store.held
	for i := 1; i <= 10; i++ {
		wg.Add(1)
		go beat(i)
	}
	waitGathered(t, b, 10)
	close(store.hold)
	waitCooling(t, b)
	b.cooled()
	wg.Wait()
	waitCooling(t, b)
	before := store.updates.Load()
	// Beats one after another while the round of 10 cools: they gather.
	for i := 11; i < 25; i++ {
		wg.Add(1)
		go beat(i)
	}
	waitGathered(t, b, 14)
	if n := store.updates.Load() - before; n != 0 {
		t.Fatalf("%d transactions while the round before cooled, want none", n)
	}
	b.cooled()
	wg.Wait()
	if n := store.updates.Load() - before; n != 1 {
		t.Errorf("%d transactions for 14 heartbeats that came while a round of 10 cooled, want 1", n)
	}
	// The 14 cool for an hour: an urgent beat does not wait for it.
	waitCooling(t, b)
	urgent := make(chan struct{})
	wg.Add(1)
	go func() { beatAs(25, true); close(urgent) }()
	select {
	case <-urgent:
	case <-time.After(10 * time.Second):
		t.Fatal("an urgent beat waited for the cooling of the round before")
	}
	if n := store.updates.Load() - before; n != 2 {
		t.Errorf("an urgent beat during a cooling: %d transactions in all, want 2", n)
	}
}

// waitCooling waits until a round's write has ended and its cooling begun.
func waitCooling(t *testing.T, b *heartbeatBatch) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; runtime.Gosched() {
		b.mu.Lock()
		cooling := b.cooling && !b.writing
		b.mu.Unlock()
		if cooling {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no round's write ended in 10 s")
		}
	}
}

// waitGathered waits until k beats have joined the gathering round.
func waitGathered(t *testing.T, b *heartbeatBatch, k int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		b.mu.Lock()
		n := 0
		if b.next != nil {
			n = len(b.next.ids)
		}
		b.mu.Unlock()
		if n >= k {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d beats gathered in 10 s, want %d: they were written without waiting for the cooling", n, k)
		}
	}
}

// idleNodes opens a store with n idle nodes, n0 to n<n-1>.
func idleNodes(t *testing.T, n int) (storekind.Store, *storetest.Clock) {
	t.Helper()
	db, clock := teststore.Open(t)
	err := db.Update(context.Background(), func(tx storekind.Tx) error {
		for i := range n {
			if err := tx.InsertNode(&node.Node{ID: fmt.Sprintf("n%d", i), Workspace: "ws", Compute: "cpu", Location: "local", State: node.NodeIdle,
				CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return db, clock
}

// heldThenGathered starts beat(0), whose write store holds, then beats 1
// to k, waits until they have gathered into the next round, and lets the
// held write go.
func heldThenGathered(b *heartbeatBatch, store *countingStore, wg *sync.WaitGroup, beat func(int), k int) {
	wg.Add(1)
	go beat(0)
	<-store.held
	for i := 1; i <= k; i++ {
		wg.Add(1)
		go beat(i)
	}
	for gathered := 0; gathered < k; {
		time.Sleep(time.Millisecond)
		b.mu.Lock()
		if b.next != nil {
			gathered = len(b.next.ids)
		}
		b.mu.Unlock()
	}
	close(store.hold)
}
