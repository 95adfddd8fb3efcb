package control_test

import (
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
)

// passLog records what a controller's pass observer is told.
type passLog struct {
	mu     sync.Mutex
	kinds  []control.PassKind
	waited map[control.PassKind]time.Duration
}

func (l *passLog) observe(k control.PassKind, waited, _ time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kinds = append(l.kinds, k)
	l.waited[k] += waited
}

func newController(t *testing.T) (*control.Controller, *passLog) {
	t.Helper()
	db, _ := teststore.Open(t)
	c := controllerOver(t, db)
	log := &passLog{waited: map[control.PassKind]time.Duration{}}
	c.SetPassObserver(log.observe)
	return c, log
}

// controllerOver is a controller over db, with one location ("local").
func controllerOver(t *testing.T, db store.Store) *control.Controller {
	t.Helper()
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: "local", Provider: "fake", Quota: catalog.DefaultQuotaLimits()}}, catalog.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	return control.New(service.New(service.Config{Store: db, Catalog: cat, Files: teststore.Files(t)}), 1)
}

// Each pass the server runs is reported once, under what started it.
func TestEveryPlacementPassIsObservedByKind(t *testing.T) {
	c, log := newController(t)
	ctx, now := t.Context(), time.Now()
	if err := c.RunPass(ctx, now, false); err != nil {
		t.Fatal(err)
	}
	if err := c.RunPlacement(ctx, now); err != nil {
		t.Fatal(err)
	}
	if err := c.RunPlacementFor(ctx, now, map[string]bool{"ws/cpu": true}); err != nil {
		t.Fatal(err)
	}
	if err := c.RunPlacementForChanged(ctx, now, map[string]bool{"ws/cpu": true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunWholeQueue(ctx, now); err != nil {
		t.Fatal(err)
	}
	want := []control.PassKind{control.PassFull, control.PassChanges, control.PassSubmitted, control.PassComputes, control.PassWholeQueue}
	if len(log.kinds) != len(want) {
		t.Fatalf("observed %v, want %v", log.kinds, want)
	}
	for i := range want {
		if log.kinds[i] != want[i] {
			t.Fatalf("observed %v, want %v", log.kinds, want)
		}
	}
}

// A new job's pass that waits for another pass says how long: what an
// operator reads when decisions are slow.
func TestSubmittedPassReportsItsWaitForTheLock(t *testing.T) {
	c, log := newController(t)
	release := c.HoldPlacement()
	done := make(chan error, 1)
	go func() { done <- c.RunPlacementFor(t.Context(), time.Now(), map[string]bool{"ws/cpu": true}) }()
	const held = 50 * time.Millisecond
	time.Sleep(held)
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if got := log.waited[control.PassSubmitted]; got < held {
		t.Errorf("the submitted pass waited %v by its own account, want at least the %v the lock was held", got, held)
	}
}

// A pass over the whole queue, which takes no lock, lets the placement
// passes that wait for the lock or hold it go first between its pages: a
// new job's decision does not share the server's core with a read of
// 100,000 queued jobs. It waits while one holds the lock and ends once
// it is released.
func TestWholeQueuePassYieldsToPlacementPasses(t *testing.T) {
	db, _ := teststore.Open(t)
	err := db.Update(t.Context(), func(tx store.Tx) error {
		cl, none := teststore.Cluster(tx, "backlog"), 0
		cl.MaxInstances = &none // the job waits
		if err := tx.InsertCompute(cl); err != nil {
			return err
		}
		return tx.InsertJob(teststore.QueuedJob(tx, "waits", "backlog", 1))
	})
	if err != nil {
		t.Fatal(err)
	}
	c := controllerOver(t, db)
	release := c.HoldPlacement()
	done := make(chan error, 1)
	go func() { _, err := c.RunWholeQueue(t.Context(), time.Now()); done <- err }()
	// A pass over one queued job ends in well under this: one still
	// running waits for the lock's holder.
	select {
	case err := <-done:
		t.Fatalf("the whole-queue pass ended (%v) while a placement pass held the lock", err)
	case <-time.After(200 * time.Millisecond):
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
