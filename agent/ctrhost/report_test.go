package ctrhost

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/domain/catalog"
)

// slowImages is an engine's image store that answers a listing when the
// test lets it (a real podman cannot be made slow on demand; under load
// it has taken 17–20 s for one call).
type slowImages struct {
	release chan struct{}
	images  []container.Image
}

func (s *slowImages) Images(ctx context.Context) ([]container.Image, error) {
	select {
	case <-s.release:
		return s.images, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *slowImages) RemoveImage(context.Context, string) error { return nil }

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

// A node's sync (its heartbeat) reads the report: it does not wait for
// the engine to list its images, nor for the engine's service to start
// or reload (mu held), and the counts a listing finds reach a later sync.
func TestReportDoesNotWaitForTheEngine(t *testing.T) {
	store := &slowImages{release: make(chan struct{}), images: []container.Image{{ID: "sha256:a", Size: 100}, {ID: "sha256:b", Size: 50}}}
	cache, err := container.NewImageCache(container.CacheConfig{Store: store, MaxBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	h := &Host{log: slog.New(slog.DiscardHandler), info: catalog.ContainerRuntimeInfo{Engine: "podman", Version: "4.3.1"}, counted: cache}

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
	// Reports while the count is under way start no second one.
	within(t, 5*time.Second, "a second report", func() { h.Report() })

	close(store.release)
	deadline := time.Now().Add(10 * time.Second)
	for !h.TakeInfoChanged() {
		if time.Now().After(deadline) {
			t.Fatal("the count did not mark the info changed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if info := h.Report(); info.CachedImages != 2 || info.CacheBytes != 150 {
		t.Errorf("report after the count: %d images, %d bytes; want 2 and 150", info.CachedImages, info.CacheBytes)
	}
	// A count that finds the same says nothing changed: the syncs that
	// carry the report do not go on asking for counts.
	time.Sleep(200 * time.Millisecond)
	if h.TakeInfoChanged() {
		t.Error("an unchanged count marked the info changed")
	}
}
