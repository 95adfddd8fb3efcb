package agentapi

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// readCountingStore counts the read transactions under way, and the most
// seen at once.
type readCountingStore struct {
	store.Store
	now, most atomic.Int32
	gate      chan struct{} // each View waits for a token, when set
}

func (c *readCountingStore) View(ctx context.Context, fn func(tx store.Tx) error) error {
	n := c.now.Add(1)
	defer c.now.Add(-1)
	for {
		m := c.most.Load()
		if n <= m || c.most.CompareAndSwap(m, n) {
			break
		}
	}
	if c.gate != nil {
		<-c.gate
	}
	return c.Store.View(ctx, fn)
}

// Agents' syncs hold at most AgentReads of the store's read transactions
// at once, whatever their number: the rest of the pool stays free for
// controller passes and users' requests (agentView).
func TestAgentSyncsHoldPartOfTheReads(t *testing.T) {
	ctx := context.Background()
	const nodes = 20
	ids := make([]string, nodes)
	for i := range ids {
		ids[i] = fmt.Sprintf("n%d", i)
	}
	db := storeWithIdleNodes(t, ids...)
	cs := &readCountingStore{Store: db, gate: make(chan struct{})}
	s := New(Config{Store: cs, AgentReads: 2})
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.SyncNode(ctx, fmt.Sprintf("n%d", i), &node.AgentSyncRequest{}, 0); err != nil {
				t.Error(err)
			}
		}()
	}
	// Let them through one at a time.
	for range nodes {
		cs.gate <- struct{}{}
		if n := cs.now.Load(); n > 2 {
			t.Fatalf("%d syncs read the store at once; want at most 2", n)
		}
	}
	wg.Wait()
	if m := cs.most.Load(); m > 2 || m < 1 {
		t.Fatalf("at most %d syncs read the store at once; want 1 or 2", m)
	}
}
