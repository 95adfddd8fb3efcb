package notify_test

import (
	"encoding/json"
	"fmt"
	"testing"

	ctlnotify "github.com/shoal-ml/shoal/control/notify"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/notify"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/store"
)

// Two servers over one PostgreSQL, each notifying under its own leader
// fence. The first queues the events of its term; once the second leads,
// the first (not knowing yet) queues nothing and moves no cursor — its
// writes are refused — and the second, from the cursor in the store,
// queues each later event once (none of the first's again), however
// often it runs.
func TestFailoverQueuesOnce(t *testing.T) {
	dbs, clock := teststore.Servers(t, 2)
	dbA, dbB := dbs[0], dbs[1]
	ctx := t.Context()
	update := func(fn func(tx store.Tx) error) {
		t.Helper()
		if err := dbA.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	update(func(tx store.Tx) error {
		return tx.PutWebhook(&notify.Webhook{Workspace: "ws", Name: "ops", URL: "https://hooks.example/ops", Events: []string{notify.NodeLost}}, []byte("sealed"))
	})
	lost := func(from, to int) {
		update(func(tx store.Tx) error {
			for i := from; i < to; i++ {
				if err := tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: "ws", ResourceType: core.ResourceCompute, ResourceName: fmt.Sprint("c", i), Kind: core.EventNodeLost}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	queued := func() map[string]int {
		t.Helper()
		out := map[string]int{}
		if err := dbB.View(ctx, func(tx store.Tx) error {
			ds, err := tx.ListDeliveries("ws", "ops", 0)
			for _, d := range ds {
				var p notify.Payload
				if err := json.Unmarshal(d.Payload, &p); err != nil {
					return err
				}
				out[p.ResourceName]++
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}

	fenceA, termA := teststore.Lead(t, dbA, "a")
	a := ctlnotify.New(ctlnotify.Config{Store: dbA, Batch: 4})
	b := ctlnotify.New(ctlnotify.Config{Store: dbB, Batch: 4})
	now := clock.Now()
	lost(0, 10)
	if n, err := a.RunOnce(fenceA, now); err != nil || n != 10 {
		t.Fatalf("a's term: queued %d, %v", n, err)
	}
	lost(10, 25)
	// b takes the lead; a does not know.
	if err := dbA.Resign(ctx, "controllers", "a"); err != nil {
		t.Fatal(err)
	}
	fenceB, termB := teststore.Lead(t, dbB, "b")
	if termB.Token == termA.Token {
		t.Fatalf("b's term has a's token %d", termA.Token)
	}
	if n, err := a.RunOnce(fenceA, now); core.ErrorCode(err) != core.ECONFLICT || n != 0 {
		t.Errorf("a's pass after losing the lead: queued %d, %v; want its writes refused (ECONFLICT)", n, err)
	}
	if got := queued(); len(got) != 10 {
		t.Fatalf("a fenced queued deliveries: %d compute events queued", len(got))
	}
	for range 2 {
		if _, err := b.RunOnce(fenceB, now); err != nil {
			t.Fatal(err)
		}
	}
	got := queued()
	if len(got) != 25 {
		t.Errorf("%d of 25 events queued after b's passes", len(got))
	}
	for name, c := range got {
		if c != 1 {
			t.Errorf("%s queued %d times", name, c)
		}
	}
}
