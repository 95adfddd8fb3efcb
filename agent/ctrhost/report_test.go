package ctrhost

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core/coretest"
)

// slowImages is an engine's image store that answers each listing when
// the test lets it (a real podman cannot be made slow on demand; under
// load it has taken 17–20 s for one call), and counts the listings.
type slowImages struct {
	release chan struct{}
	mu      sync.Mutex
	images  []container.Image
	calls   int
}

func (s *slowImages) Images(ctx context.Context) ([]container.Image, error) {
	s.mu.Lock()
	s.calls++
	list := append([]container.Image(nil), s.images...) // as the listing began
	s.mu.Unlock()
	select {
	case s.release <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return list, nil
}

func (s *slowImages) RemoveImage(context.Context, string) error { return nil }

func (s *slowImages) listings() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func (s *slowImages) set(images ...container.Image) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.images = images
}

// within fails unless fn returns within d.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s waited over %s", what, d)
	}
}

// answered lets the store answer one listing, and waits until the host
// has taken in what it said and marked its info changed.
func answered(t *testing.T, h *Host, s *slowImages) {
	t.Helper()
	select {
	case <-s.release:
	case <-time.After(10 * time.Second):
		t.Fatal("no listing of the images was asked")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !h.TakeInfoChanged() {
		if time.Now().After(deadline) {
			t.Fatal("the count did not mark the info changed")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// idle waits until no count is under way.
func idle(t *testing.T, h *Host) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		h.infoMu.Lock()
		busy := h.counting
		h.infoMu.Unlock()
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the count did not end")
		}
	}
}

// A node's sync (its heartbeat) reads the report: it does not wait for
// the engine to list its images, nor for the engine's service to start
// or reload (mu held); the counts a listing finds reach a later sync;
// one listing runs at a time, and one asked for while another runs
// follows it; this node's own pulls call for a count at once, and
// otherwise counts are paced, so that a store other nodes change does
// not make every sync carry the report.
func TestReportDoesNotWaitForTheEngine(t *testing.T) {
	store := &slowImages{release: make(chan struct{}), images: []container.Image{{ID: "sha256:a", Size: 100}, {ID: "sha256:b", Size: 50}}}
	cache, err := container.NewImageCache(container.CacheConfig{Store: store, MaxBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	clock := coretest.NewClock(time.Unix(1_000_000, 0))
	h := &Host{log: slog.New(slog.DiscardHandler), clock: clock, info: catalog.ContainerRuntimeInfo{Engine: "podman", Version: "4.3.1"}, counted: cache}

	// The engine's service starting: mu held for as long as it takes.
	h.mu.Lock()
	var info *catalog.ContainerRuntimeInfo
	within(t, 5*time.Second, "a report while the engine lists its images and its service starts", func() {
		info = h.Report()
		if h.TakeInfoChanged() {
			t.Error("the info changed before any count came")
		}
	})
	h.mu.Unlock()
	if info.Engine != "podman" || info.CachedImages != 0 {
		t.Errorf("first report %+v, want the engine and no count yet", info)
	}
	// A report while the count runs starts no second listing.
	for deadline := time.Now().Add(10 * time.Second); store.listings() == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	within(t, 5*time.Second, "a second report", func() { h.Report() })
	time.Sleep(50 * time.Millisecond)
	if n := store.listings(); n != 1 {
		t.Errorf("%d listings under way, want 1", n)
	}
	answered(t, h, store)
	idle(t, h)
	if info := h.Report(); info.CachedImages != 2 || info.CacheBytes != 150 {
		t.Errorf("report after the count: %d images, %d bytes; want 2 and 150", info.CachedImages, info.CacheBytes)
	}
	if n := store.listings(); n != 1 {
		t.Errorf("%d listings after one count and a report within a minute, want 1", n)
	}

	// The node pulls an image while a paced count (due a minute on) runs
	// on the old list: a second count follows it, and the new image
	// reaches a later sync.
	clock.Advance(countEvery)
	h.Report()
	h.ImagesChanged()
	if !h.TakeInfoChanged() {
		t.Error("a pull did not mark the info changed")
	}
	h.Report() // the sync that carries it: a count is due, one runs
	store.set(container.Image{ID: "sha256:a", Size: 100}, container.Image{ID: "sha256:b", Size: 50}, container.Image{ID: "sha256:c", Size: 25})
	select {
	case <-store.release: // the running count answers the list it began with
	case <-time.After(10 * time.Second):
		t.Fatal("no listing of the images was asked")
	}
	answered(t, h, store)
	idle(t, h)
	if info := h.Report(); info.CachedImages != 3 || info.CacheBytes != 175 {
		t.Errorf("report after the pull: %d images, %d bytes; want 3 and 175", info.CachedImages, info.CacheBytes)
	}
	if n := store.listings(); n != 3 {
		t.Errorf("%d listings, want 3", n)
	}
	// Within the minute, a report (a changed GPU list, say) counts nothing.
	clock.Advance(countEvery / 2)
	h.Report()
	time.Sleep(50 * time.Millisecond)
	if n := store.listings(); n != 3 || h.TakeInfoChanged() {
		t.Errorf("a report within the minute: %d listings (want 3)", n)
	}
}
