package nodes_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/nodes"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
)

// readCounter is the services with a store whose read transactions count
// the nodes their lists return.
type readCounter struct {
	*service.Services
	st *countingStore
}

func (r readCounter) Store() store.Store { return r.st }

type countingStore struct {
	store.Store
	read int
}

func (s *countingStore) View(ctx context.Context, fn func(tx store.Tx) error) error {
	return s.Store.View(ctx, func(tx store.Tx) error { return fn(countingTx{tx, s}) })
}

type countingTx struct {
	store.Tx
	s *countingStore
}

func (t countingTx) ListNodes(f node.NodeFilter) ([]*node.Node, error) {
	nodes, err := t.Tx.ListNodes(f)
	t.s.read += len(nodes)
	return nodes, err
}

func (t countingTx) ListNodesDue(heardBefore time.Time) ([]*node.Node, error) {
	nodes, err := t.Tx.ListNodesDue(heardBefore)
	t.s.read += len(nodes)
	return nodes, err
}

// A pass reads the nodes that may be due, not every node: of 200 nodes
// that report on time and one silent past its lease, a pass reads the
// silent one, and still declares it lost. On main every pass read all
// 201 (16 % of a server's CPU at 2,000 nodes).
func TestRunOnceReadsOnlyTheNodesThatMayBeDue(t *testing.T) {
	ctx := context.Background()
	const fresh = 200
	db, clock, svc := localFleet(t, fresh+1, func(i int) string {
		if i == fresh {
			return "silent"
		}
		return fmt.Sprintf("n-%03d", i)
	}, idle)
	counted := readCounter{svc, &countingStore{Store: db}}
	loop := nodes.New(counted, svc.Config())
	pass := func() int {
		t.Helper()
		before := counted.st.read
		if err := loop.RunOnce(ctx, clock.Now()); err != nil {
			t.Fatal(err)
		}
		loop.Wait()
		return counted.st.read - before
	}
	if n := pass(); n != 0 {
		t.Errorf("the first pass, every node just heard, read %d nodes, want 0", n)
	}
	// 16 s on, every node but "silent" has reported.
	clock.Advance(16 * time.Second)
	if err := db.Update(ctx, func(tx store.Tx) error {
		for i := range fresh {
			if err := tx.RenewNodeLeases([]string{fmt.Sprintf("n-%03d", i)}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := pass(); n != 1 {
		t.Errorf("a pass with one node past its lease read %d nodes, want 1", n)
	}
	st := nodeState(t, db, "silent")
	if st != "gone" && st != node.NodeUnusable {
		t.Errorf("the node past its lease is %s, want lost (unusable) or released", st)
	}
}
