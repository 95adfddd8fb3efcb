package watch_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/watch"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/postgres"
	"github.com/shoal-ml/shoal/store/storetest"
)

// harness is a real store (SQLite) and services on a fake clock; the loop
// under test is built with loop(), again for each "restart".
type harness struct {
	t     *testing.T
	ctx   context.Context
	db    store.Store
	clock *storetest.Clock
	svc   *service.Services
	th    watch.Thresholds
}

func newHarness(t *testing.T) *harness {
	db, clock := teststore.Open(t)
	return harnessOver(t, db, clock)
}

// newPGHarness is newHarness over a PostgreSQL store of its own (where
// servers share one store and a new leader takes over).
func newPGHarness(t *testing.T) *harness {
	clock := storetest.NewClock(storetest.Start)
	db, err := postgres.Open(t.Context(), postgres.Config{URL: testpg.Start(t).NewDatabase(t), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertWorkspace(&core.Workspace{Name: "ws", Location: "local", CreatedOn: tx.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	return harnessOver(t, db, clock)
}

func harnessOver(t *testing.T, db store.Store, clock *storetest.Clock) *harness {
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: "local", Provider: "fake", Quota: catalog.DefaultQuotaLimits()}}, catalog.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: db, Catalog: cat, Clock: clock})
	h := &harness{t: t, ctx: context.Background(), db: db, clock: clock, svc: svc,
		th: watch.Thresholds{QueueWait: 30 * time.Minute, GPUIdlePercent: 50, GPUIdleWindow: 30 * time.Minute,
			ProvisioningStuckAfter: 15 * time.Minute, IdleShutdownWarning: 10 * time.Minute}}
	h.update(func(tx store.Tx) error { return tx.InsertCompute(teststore.Cluster(tx, "gpu")) })
	return h
}

func (h *harness) loop() *watch.Loop { return watch.New(h.svc, h.th) }

func (h *harness) update(fn func(tx store.Tx) error) {
	h.t.Helper()
	if err := h.db.Update(h.ctx, fn); err != nil {
		h.t.Fatal(err)
	}
}

// pass advances the clock by d and runs l once at the new time.
func (h *harness) pass(l *watch.Loop, d time.Duration) {
	h.t.Helper()
	if err := l.RunOnce(h.ctx, h.clock.Advance(d)); err != nil {
		h.t.Fatal(err)
	}
}

// events returns the events of kind on resource type rt, as
// "name: reason" lines.
func (h *harness) events(rt, kind string) []string {
	h.t.Helper()
	var out []string
	err := h.db.View(h.ctx, func(tx store.Tx) error {
		list, err := tx.ListEvents(core.EventFilter{Workspace: "ws", ResourceType: rt})
		for _, e := range list {
			if e.Kind == kind {
				out = append(out, e.ResourceName+": "+e.Reason)
			}
		}
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// count fails the test unless resource type rt has n events of kind,
// and returns them.
func (h *harness) count(rt, kind string, n int, when string) []string {
	h.t.Helper()
	got := h.events(rt, kind)
	if len(got) != n {
		h.t.Fatalf("%s events %s: %q, want %d", kind, when, got, n)
	}
	return got
}

// names returns the resource names of lines from events.
func names(lines []string) string {
	var out []string
	for _, l := range lines {
		n, _, _ := strings.Cut(l, ": ")
		out = append(out, n)
	}
	return strings.Join(out, " ")
}

// submit inserts a queued job on "gpu" submitted at the clock's now.
func (h *harness) submit(tx store.Tx, name string) *job.Job {
	h.t.Helper()
	seq, err := tx.NextSeq("jobs")
	if err != nil {
		h.t.Fatal(err)
	}
	j := &job.Job{JobSpec: job.JobSpec{Name: name, Type: "command", Command: "nvidia-smi", Compute: "gpu"},
		Workspace: "ws", Status: job.JobQueued, CreatedOn: h.clock.Now(), Seq: seq, Version: 1}
	if err := tx.InsertJob(j); err != nil {
		h.t.Fatal(err)
	}
	return j
}

// gauges records what the loop publishes for the metrics.
type gauges struct {
	mu   sync.Mutex
	last []watch.GPUUtilization
}

func (g *gauges) SetJobGPUUtilization(s []watch.GPUUtilization) {
	g.mu.Lock()
	g.last = s
	g.mu.Unlock()
}
