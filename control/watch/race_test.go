package watch_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/watch"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// Two loops over one store passing at the same instant (a leader and the
// one taking over, both reading before either writes) tell each job and
// node once: the write re-reads the cursor and records nothing when the
// other moved it.
func TestTwoLoopsAtOnceTellEachConditionOnce(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { twoLoopsAtOnce(t, newHarness(t)) })
	t.Run("postgres", func(t *testing.T) { twoLoopsAtOnce(t, newPGHarness(t)) })
}

func twoLoopsAtOnce(t *testing.T, h *harness) {
	h.update(func(tx store.Tx) error {
		for i := range 40 {
			h.submit(tx, fmt.Sprintf("j%02d", i))
			if err := tx.InsertNode(&node.Node{ID: fmt.Sprintf("n%02d", i), Workspace: "ws", Compute: "gpu", Location: "local",
				State: node.NodePreparing, CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1}); err != nil {
				return err
			}
			h.clock.Advance(time.Second)
		}
		return nil
	})
	a, b := h.loop(), h.loop()
	for range 5 {
		now := h.clock.Advance(10 * time.Minute)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, l := range []*watch.Loop{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = l.RunOnce(h.ctx, now)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct{ rt, kind string }{{core.ResourceJob, core.EventQueuedTooLong}, {core.ResourceCompute, core.EventProvisioningStuck}} {
		// Each event names its job or node: 40 events, 40 names.
		got := h.events(c.rt, c.kind)
		seen := map[string]bool{}
		for _, l := range got {
			_, rest, _ := strings.Cut(l, ": ")
			f := strings.Fields(rest)
			seen[f[1]] = true
		}
		if len(got) != 40 || len(seen) != 40 {
			t.Errorf("%d %s events naming %d jobs or nodes, want 40 each", len(got), c.kind, len(seen))
		}
	}
}
