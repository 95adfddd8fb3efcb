package filestore

import (
	"errors"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// UsageKinds are the top folders (keys' first component) whose files
// count against a workspace's storage quota: its artifacts, its jobs'
// outputs and logs, and its instances' setup logs. Logs count because
// each is capped per rank only, and many jobs × ranks × attempts would
// otherwise fill the disk with nothing to stop them.
var UsageKinds = []string{"artifacts", "outputs", "logs", "instances"}

// UsageDirs are the folders (keys' prefixes) whose files count against a
// workspace's storage quota, one per UsageKinds.
func UsageDirs(workspace string) ([]string, error) {
	if err := checkName("workspace", workspace); err != nil {
		return nil, err
	}
	ws := strings.ToLower(workspace)
	dirs := make([]string, len(UsageKinds))
	for i, k := range UsageKinds {
		dirs[i] = path.Join(k, ws)
	}
	return dirs, nil
}

// usageCounters keep each workspace's bytes, so that Usage (asked before
// every upload step and every log write) costs a lock, not a walk of the
// workspace's folders. A workspace's count is walked once, at its first
// Usage, then kept by the writes through this store, which hold the
// workspace's lock around the change they make and measure (the file's
// size before and after). Only this process writes the store's folder.
type usageCounters struct {
	mu sync.Mutex
	ws map[string]*wsUsage
}

type wsUsage struct {
	mu    sync.Mutex
	known bool // bytes was walked and has been kept since
	bytes int64
}

func (u *usageCounters) of(workspace string) *wsUsage {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.ws == nil {
		u.ws = map[string]*wsUsage{}
	}
	ws := strings.ToLower(workspace)
	w := u.ws[ws]
	if w == nil {
		w = &wsUsage{}
		u.ws[ws] = w
	}
	return w
}

// account runs change, which returns the bytes it added to workspace's
// files (negative: removed), under the workspace's lock, and keeps the
// count. A change that fails still reports what it did change.
func (s *Store) account(workspace string, change func() (int64, error)) error {
	w := s.usage.of(workspace)
	w.mu.Lock()
	defer w.mu.Unlock()
	delta, err := change()
	if w.known {
		w.bytes += delta
	}
	return err
}

// forget drops a workspace's count, walked again at its next Usage: for
// changes that are simpler to walk than to measure (a folder removed).
func (s *Store) forget(workspace string, change func() error) error {
	w := s.usage.of(workspace)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.known = false
	return change()
}

// Usage returns the bytes a workspace's artifacts, outputs and logs take
// (sizes as files report them).
func (s *Store) Usage(workspace string) (int64, error) {
	dirs, err := UsageDirs(workspace)
	if err != nil {
		return 0, err
	}
	w := s.usage.of(workspace)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.known {
		return w.bytes, nil
	}
	total, err := s.walkUsage(dirs)
	if err != nil {
		return 0, err
	}
	w.bytes, w.known = total, true
	return total, nil
}

// walkUsage adds up the sizes of the files under dirs.
func (s *Store) walkUsage(dirs []string) (int64, error) {
	var total int64
	fsys := s.root.FS()
	for _, dir := range dirs {
		err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // a file removed meanwhile, or no folder yet
				}
				return err
			}
			if d.Type().IsRegular() && !strings.HasSuffix(p, ".tmp") {
				if fi, err := d.Info(); err == nil {
					total += fi.Size()
				}
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return total, nil
}
