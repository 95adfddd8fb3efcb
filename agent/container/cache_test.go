package container_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
)

// fakeStore is an in-memory image store.
type fakeStore struct{ imgs []container.Image }

func (f *fakeStore) Images(context.Context) ([]container.Image, error) {
	return slices.Clone(f.imgs), nil
}

func (f *fakeStore) RemoveImage(_ context.Context, id string) error {
	for i, img := range f.imgs {
		if img.ID == id {
			if img.Containers > 0 {
				return &container.Error{Kind: container.ErrInUse, Op: "remove image " + id, Msg: "in use"}
			}
			f.imgs = slices.Delete(f.imgs, i, i+1)
			return nil
		}
	}
	return &container.Error{Kind: container.ErrNotFound, Op: "remove image " + id, Msg: "gone"}
}

// stepClock is a clock the test moves.
type stepClock struct{ t time.Time }

func (c *stepClock) Now() time.Time { return c.t }

func ids(imgs []container.Image) []string {
	var out []string
	for _, img := range imgs {
		out = append(out, img.ID)
	}
	return out
}

func TestImageCacheEvictsLeastRecentlyUsedFirstAndNeverInUse(t *testing.T) {
	t0 := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	store := &fakeStore{imgs: []container.Image{
		{ID: "a", Size: 100, Created: t0},
		{ID: "b", Size: 100, Created: t0.Add(time.Minute)},
		{ID: "c", Size: 100, Created: t0.Add(2 * time.Minute), Containers: 1}, // in use, oldest use
		{ID: "d", Size: 100, Created: t0.Add(3 * time.Minute)},
	}}
	clock := &stepClock{t: t0.Add(time.Hour)}
	cache, err := container.NewImageCache(container.CacheConfig{Store: store, MaxBytes: 250, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	cache.Used("a") // a is now the most recently used
	got, err := cache.Evict(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// 400 bytes over a 250 cap: b (least recent) and d go; c is in use.
	if want := []string{"b", "d"}; !slices.Equal(ids(got), want) {
		t.Fatalf("evicted %v, want %v", ids(got), want)
	}
	if want := []string{"a", "c"}; !slices.Equal(ids(store.imgs), want) {
		t.Fatalf("left %v, want %v", ids(store.imgs), want)
	}
	// Within the cap now: nothing more goes.
	if got, _ := cache.Evict(context.Background()); len(got) != 0 {
		t.Fatalf("evicted %v within the cap", ids(got))
	}
}

func TestImageCacheKeepsImagesInUseOverTheCap(t *testing.T) {
	store := &fakeStore{imgs: []container.Image{{ID: "x", Size: 500, Containers: 2}, {ID: "y", Size: 10}}}
	cache, _ := container.NewImageCache(container.CacheConfig{Store: store, MaxBytes: 100})
	got, err := cache.Evict(context.Background())
	if err != nil || !slices.Equal(ids(got), []string{"y"}) || !slices.Equal(ids(store.imgs), []string{"x"}) {
		t.Fatalf("evicted %v (err %v), left %v; want y evicted and x kept", ids(got), err, ids(store.imgs))
	}
}

func TestNewImageCacheRefusesBadConfig(t *testing.T) {
	if _, err := container.NewImageCache(container.CacheConfig{Store: &fakeStore{}, MaxBytes: 0}); err == nil {
		t.Fatal("MaxBytes 0 accepted")
	}
	if _, err := container.NewImageCache(container.CacheConfig{MaxBytes: 1}); err == nil {
		t.Fatal("nil Store accepted")
	}
}
