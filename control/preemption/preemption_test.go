package preemption

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/store"
)

// services records the preemptions the loop asks for.
type services struct {
	store     store.Store
	cat       *catalog.Catalog
	preempted []string
}

func (s *services) Store() store.Store        { return s.store }
func (s *services) Catalog() *catalog.Catalog { return s.cat }
func (s *services) Logger() *slog.Logger      { return slog.New(slog.DiscardHandler) }
func (s *services) PreemptNodeBecause(_ context.Context, _, _, id, _ string) error {
	s.preempted = append(s.preempted, id)
	return nil
}

func setup(t *testing.T, rate float64) *services {
	db, _ := teststore.Open(t)
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: "local", Provider: "fake", Quota: catalog.DefaultQuotaLimits(), PreemptionRatePerHour: rate}}, catalog.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(context.Background(), func(tx store.Tx) error {
		for i, low := range []bool{true, true, true, false} {
			n := &node.Node{ID: fmt.Sprintf("n%d", i), Workspace: "ws", Compute: "c", Location: "local", State: node.NodeIdle,
				LowPriority: low, CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1}
			if err := tx.InsertNode(n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return &services{store: db, cat: cat}
}

// At a high rate every low-priority node goes within an hour, and a
// dedicated one never; the first pass only starts the clock.
func TestPreemptsLowPriorityAtTheRate(t *testing.T) {
	s := setup(t, 1000)
	l := New(s, rand.New(rand.NewPCG(1, 2)))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l.RunOnce(context.Background(), t0)
	if len(s.preempted) != 0 {
		t.Fatalf("first pass preempted %v", s.preempted)
	}
	l.RunOnce(context.Background(), t0.Add(time.Hour))
	if len(s.preempted) != 3 {
		t.Errorf("preempted %v, want the three low-priority nodes", s.preempted)
	}
	for _, id := range s.preempted {
		if id == "n3" {
			t.Error("a dedicated node was preempted")
		}
	}
}

// A location without a rate preempts nothing.
func TestNoRateNoPreemption(t *testing.T) {
	s := setup(t, 0)
	l := New(s, rand.New(rand.NewPCG(1, 2)))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l.RunOnce(context.Background(), t0)
	l.RunOnce(context.Background(), t0.Add(24*time.Hour))
	if len(s.preempted) != 0 {
		t.Errorf("preempted %v at rate 0", s.preempted)
	}
}
