package ctrhost

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/shoal-ml/shoal/agent/container"
)

// gpus are the GPUs the engine can give containers on this host, as it
// said when it was opened.
func (h *Host) GPUs(context.Context) container.GPUs {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gpuInfo
}

// Evict keeps the store's images within the cache's cap once a rank is
// done with its image.
func (h *Host) Evict(ctx context.Context) {
	if h == nil {
		return
	}
	h.mu.Lock()
	cache := h.cache
	h.mu.Unlock()
	if cache == nil {
		return
	}
	// One node of the store evicts at a time, knowing what the others
	// used lately: the cap is the store's, not each node's.
	unlock, err := h.hostLock(ctx, "evict")
	if err != nil {
		return
	}
	defer unlock()
	h.loadUses(cache)
	evicted, err := cache.Evict(ctx)
	if err != nil {
		h.log.Warn("evicting images failed", "err", err)
	}
	if len(evicted) > 0 {
		h.ImagesChanged()
	}
	for _, img := range evicted {
		_ = os.Remove(filepath.Join(h.usesDir(), strings.TrimPrefix(img.ID, "sha256:")))
		h.log.Info("evicted an image (the cache is over its cap)", "image", img.ID, "refs", img.Refs, "bytes", img.Size)
	}
}
