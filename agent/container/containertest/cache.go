package containertest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
)

// clock is a clock the test sets.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

// testImageCache builds two images, uses one in a container, and caps
// the cache one byte under the total: the least recently used image not
// in use goes, the one in use stays though it was used even earlier.
func testImageCache(t *testing.T, h Harness) {
	rt := h.Runtime
	build := func(name string) container.Image {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM "+h.BaseImage+"\nRUN echo "+name+" > /name\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		img, err := rt.Build(ctxFor(t, 3*time.Minute), container.BuildOptions{ContextDir: dir, Tag: "localhost/shoal-test/cache-" + name + ":" + token()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rt.RemoveImage(context.Background(), img.ID) })
		return img
	}
	old, inUse := build("old"), build("inuse")
	id, err := rt.Run(ctxFor(t, time.Minute), container.Spec{Image: inUse.ID, Command: []string{"sleep", "300"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Remove(context.Background(), id)

	imgs, err := rt.Images(ctxFor(t, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, img := range imgs {
		total += img.Size
		if img.ID == inUse.ID && (img.Containers != 1 || img.LastUsed.IsZero()) {
			t.Errorf("the image in use: %d containers, last used %v; want 1 and its container's creation", img.Containers, img.LastUsed)
		}
	}
	clk := &clock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	cache, err := container.NewImageCache(container.CacheConfig{Store: rt, MaxBytes: total - 1, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	cache.Used(inUse.ID) // the earliest use, but it is in use
	clk.t = clk.t.Add(time.Hour)
	cache.Used(old.ID)
	clk.t = clk.t.Add(time.Hour)
	for _, img := range imgs {
		if img.ID != inUse.ID && img.ID != old.ID {
			cache.Used(img.ID) // everything else since
		}
	}
	evicted, err := cache.Evict(ctxFor(t, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(evicted) != 1 || evicted[0].ID != old.ID {
		t.Fatalf("evicted %+v, want the least recently used image not in use (%s) alone", evicted, old.ID)
	}
	_, err = rt.Inspect(ctxFor(t, time.Minute), old.ID)
	wantKind(t, "inspect the evicted image", err, container.ErrNotFound)
	after, _ := rt.Images(ctxFor(t, time.Minute))
	if !slices.ContainsFunc(after, func(i container.Image) bool { return i.ID == inUse.ID }) {
		t.Error("the image in use was removed")
	}
	err = rt.RemoveImage(ctxFor(t, time.Minute), inUse.ID)
	wantKind(t, "remove an image in use", err, container.ErrInUse)
}
