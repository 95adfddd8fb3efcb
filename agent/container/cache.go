package container

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// ImageStore is what ImageCache needs of a Runtime.
type ImageStore interface {
	Images(ctx context.Context) ([]Image, error)
	RemoveImage(ctx context.Context, id string) error
}

// CacheConfig configures an ImageCache.
type CacheConfig struct {
	Store ImageStore
	// MaxBytes caps the images' total size; must be positive.
	MaxBytes int64
	// Clock stamps uses; shoal.SystemClock when nil.
	Clock core.Clock
}

// ImageCache keeps a host's images under a byte cap, evicting the least
// recently used first and never one a container uses. Engines do not
// record when an image was last used once its containers are removed,
// so the agent tells the cache (Used) each time it starts a container.
type ImageCache struct {
	store ImageStore
	max   int64
	clock core.Clock

	mu   sync.Mutex
	used map[string]time.Time // image id → last use the agent recorded
}

// NewImageCache makes a cache over cfg.Store.
func NewImageCache(cfg CacheConfig) (*ImageCache, error) {
	if cfg.Store == nil {
		return nil, errors.New("image cache: Store is required")
	}
	if cfg.MaxBytes <= 0 {
		return nil, fmt.Errorf("image cache: MaxBytes %d must be positive", cfg.MaxBytes)
	}
	if cfg.Clock == nil {
		cfg.Clock = core.SystemClock{}
	}
	return &ImageCache{store: cfg.Store, max: cfg.MaxBytes, clock: cfg.Clock, used: map[string]time.Time{}}, nil
}

// Used records that image id was used now.
func (c *ImageCache) Used(id string) {
	now := c.clock.Now()
	c.mu.Lock()
	c.used[normalID(id)] = now
	c.mu.Unlock()
}

// UsedAt records a use of image id at t unless a later one is recorded:
// a use another agent on the same store recorded (its node shares the
// store), so that this one does not evict an image that node just
// pulled.
func (c *ImageCache) UsedAt(id string, t time.Time) {
	c.mu.Lock()
	if t.After(c.used[normalID(id)]) {
		c.used[normalID(id)] = t
	}
	c.mu.Unlock()
}

// lastUse is an image's last use: the newer of the agent's record and
// the engine's (its newest container), else its creation.
func (c *ImageCache) lastUse(img Image) time.Time {
	c.mu.Lock()
	t := c.used[normalID(img.ID)]
	c.mu.Unlock()
	if img.LastUsed.After(t) {
		t = img.LastUsed
	}
	if t.IsZero() {
		t = img.Created
	}
	return t
}

// Evict removes the least recently used images not in use until the
// total size is within the cap, and returns those it removed. When the
// images in use alone exceed the cap, it removes every other one and
// stops there. An image that turns out in use on removal is skipped.
func (c *ImageCache) Evict(ctx context.Context) ([]Image, error) {
	imgs, err := c.store.Images(ctx)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, img := range imgs {
		total += img.Size
	}
	var candidates []Image
	for _, img := range imgs {
		if img.Containers == 0 {
			candidates = append(candidates, img)
		}
	}
	slices.SortStableFunc(candidates, func(a, b Image) int { return c.lastUse(a).Compare(c.lastUse(b)) })
	var evicted []Image
	for _, img := range candidates {
		if total <= c.max {
			break
		}
		if err := c.store.RemoveImage(ctx, img.ID); err != nil {
			if errors.Is(err, ErrInUse) || errors.Is(err, ErrNotFound) {
				continue // taken into use (or removed) since the listing
			}
			return evicted, err
		}
		total -= img.Size
		evicted = append(evicted, img)
		c.mu.Lock()
		delete(c.used, normalID(img.ID))
		c.mu.Unlock()
	}
	return evicted, nil
}

// normalID is an image id without its "sha256:" prefix.
func normalID(id string) string {
	if len(id) > 7 && id[:7] == "sha256:" {
		return id[7:]
	}
	return id
}

// Usage is how many images the store holds and their total size, as
// the node reports its cache.
func (c *ImageCache) Usage(ctx context.Context) (images int, bytes int64, err error) {
	imgs, err := c.store.Images(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, img := range imgs {
		bytes += img.Size
	}
	return len(imgs), bytes, nil
}
