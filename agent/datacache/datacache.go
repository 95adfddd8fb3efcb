// Package datacache is a node's content-addressed cache of job inputs:
// a data version fetched once serves every job on the host. An entry is
// a read-only, root-owned directory named by the Key of what it holds
// (the source and its listing: keys, sizes, versions), so a changed
// object is a new entry, never a stale one. The cache keeps its entries'
// total under a size cap by evicting, least recently used first, the
// entries no running rank holds; concurrent Gets of one key fetch once.
package datacache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

	"github.com/shoal-ml/shoal/storage/objstore"
)

// Key names an entry: the SHA-256 of its source and listing.
type Key [32]byte

// String is the key in hex, the entry's directory name.
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// KeyOf is the key of the objects listed from the source that
// sourceIdentity names (its URL with container or bucket and prefix,
// never a credential): the same bytes from the same place are one entry.
func KeyOf(sourceIdentity string, objects []objstore.Object) Key {
	objs := append([]objstore.Object(nil), objects...)
	sort.Slice(objs, func(i, j int) bool { return objs[i].Key < objs[j].Key })
	h := sha256.New()
	// Length-prefixed fields: no two listings write the same stream.
	field := func(s string) { h.Write([]byte(strconv.Itoa(len(s)) + ":" + s)) }
	field(sourceIdentity)
	for _, o := range objs {
		field(o.Key)
		field(strconv.FormatInt(o.Size, 10))
		field(o.ETag)
	}
	var k Key
	h.Sum(k[:0])
	return k
}

// KeyOfVersion is the key of a registered data asset or model version
// (asset, "name:version") of workspace, read from the place that
// sourceIdentity names: a version's bytes are fetched once per node and
// serve every later job of the workspace that reads that version from
// there, without a listing to tell its content. Another workspace's
// version of the same name is another entry: it reaches the cache only
// through its own fetch.
func KeyOfVersion(sourceIdentity, workspace, asset string) Key {
	h := sha256.New()
	field := func(s string) { h.Write([]byte(strconv.Itoa(len(s)) + ":" + s)) }
	// A tag no listing key starts with: the two kinds never meet.
	field("registered version")
	field(sourceIdentity)
	field(workspace)
	field(asset)
	var k Key
	h.Sum(k[:0])
	return k
}

// ErrTooLarge is the class of an input larger than the whole cache.
var ErrTooLarge = errors.New("larger than the data cache")

// Cache is one host's data cache.
type Cache struct {
	dir string
	cap int64

	mu      sync.Mutex
	entries map[Key]*entry
	filling map[Key]*fill
	used    int64
	clock   uint64 // a use counter orders entries for LRU, no wall clock
}

// entry is one cached directory.
type entry struct {
	key  Key
	size int64
	refs int
	used uint64
}

// fill is a fetch in flight that other Gets of its key wait for.
type fill struct {
	done chan struct{}
	err  error
}

// Open opens the cache in dir (created if missing) with a cap of
// capBytes, taking in the entries a previous run left (oldest first by
// modification time) and removing half-filled ones.
func Open(dir string, capBytes int64) (*Cache, error) {
	if capBytes <= 0 {
		return nil, fmt.Errorf("datacache: the cap must be positive, not %d", capBytes)
	}
	// The cache holds every workspace's inputs: only the agent reaches
	// it by its path. A job sees an entry only where the agent mounts
	// it (its inputs folder, a container's volume), so the folders are
	// closed to others, an existing one included.
	for _, d := range []string{dir, filepath.Join(dir, "entries"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
		if err := os.Chmod(d, 0o700); err != nil {
			return nil, err
		}
	}
	tmp := filepath.Join(dir, "tmp")
	if err := removeAll(tmp); err != nil {
		return nil, err
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return nil, err
	}
	c := &Cache{dir: dir, cap: capBytes, entries: map[Key]*entry{}, filling: map[Key]*fill{}}
	des, err := os.ReadDir(filepath.Join(dir, "entries"))
	if err != nil {
		return nil, err
	}
	type found struct {
		e     *entry
		mtime int64
	}
	var all []found
	for _, de := range des {
		b, err := hex.DecodeString(de.Name())
		p := filepath.Join(dir, "entries", de.Name())
		if err != nil || len(b) != 32 || !de.IsDir() {
			removeAll(p)
			continue
		}
		info, err := de.Info()
		if err != nil {
			return nil, err
		}
		size, err := duSize(p)
		if err != nil {
			return nil, err
		}
		var k Key
		copy(k[:], b)
		all = append(all, found{&entry{key: k, size: size}, info.ModTime().UnixNano()})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mtime < all[j].mtime })
	for _, f := range all {
		c.clock++
		f.e.used = c.clock
		c.entries[f.e.key] = f.e
		c.used += f.e.size
	}
	c.mu.Lock()
	c.evictLocked()
	c.mu.Unlock()
	return c, nil
}

// Entry is a held cache entry: its directory stays until Release.
type Entry struct {
	c    *Cache
	e    *entry
	once sync.Once
}

// Dir is the entry's read-only directory.
func (en *Entry) Dir() string { return en.c.path(en.e.key) }

// Size is the bytes it holds.
func (en *Entry) Size() int64 { return en.e.size }

// Release lets the entry be evicted again; a second call does nothing.
func (en *Entry) Release() {
	en.once.Do(func() {
		c := en.c
		c.mu.Lock()
		defer c.mu.Unlock()
		en.e.refs--
		c.clock++
		en.e.used = c.clock
		c.evictLocked()
	})
}

// Used is the bytes the cache's entries hold.
func (c *Cache) Used() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// path is an entry's directory.
func (c *Cache) path(k Key) string { return filepath.Join(c.dir, "entries", k.String()) }

// Lookup returns the entry of key, held for the caller (Release it),
// when the cache has it whole; it never fetches, nor waits for a fill.
func (c *Cache) Lookup(key Key) (*Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e.refs++
	c.clock++
	e.used = c.clock
	return &Entry{c: c, e: e}, true
}

// Get returns the entry for key, held, filling it first if it is not
// cached: fn writes the input (size bytes, as its listing says) into
// the empty directory it is given. Concurrent Gets of one key run one
// fill and share its outcome. A failed fill leaves nothing behind; an
// input larger than the cap fails at once (ErrTooLarge), saying both.
func (c *Cache) Get(ctx context.Context, key Key, size int64, fn func(dir string) error) (*Entry, error) {
	if size > c.cap {
		return nil, fmt.Errorf("%w: the input is %d bytes and the node's data cache holds at most %d (the agent's --data-cache-gb)", ErrTooLarge, size, c.cap)
	}
	for {
		c.mu.Lock()
		if e, ok := c.entries[key]; ok {
			e.refs++
			c.clock++
			e.used = c.clock
			c.mu.Unlock()
			return &Entry{c: c, e: e}, nil
		}
		if f, ok := c.filling[key]; ok {
			c.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if f.err != nil {
				if errors.Is(f.err, context.Canceled) || errors.Is(f.err, context.DeadlineExceeded) {
					continue // the filler's caller gave up, not this one: fill afresh
				}
				return nil, f.err
			}
			continue
		}
		f := &fill{done: make(chan struct{})}
		c.filling[key] = f
		c.mu.Unlock()

		e, err := c.fill(ctx, key, size, fn)
		c.mu.Lock()
		delete(c.filling, key)
		f.err = err
		close(f.done)
		if err != nil {
			c.mu.Unlock()
			return nil, err
		}
		c.clock++
		e.used = c.clock
		e.refs = 1
		c.entries[key] = e
		c.used += e.size
		c.evictLocked()
		c.mu.Unlock()
		return &Entry{c: c, e: e}, nil
	}
}

// fill runs fn into a fresh temporary directory, makes it read-only and
// root's, and moves it into place.
func (c *Cache) fill(ctx context.Context, key Key, size int64, fn func(dir string) error) (*entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.reserveLocked(size)
	c.mu.Unlock()
	tmp, err := os.MkdirTemp(filepath.Join(c.dir, "tmp"), key.String()[:16]+"-")
	if err != nil {
		return nil, err
	}
	if err := fn(tmp); err != nil {
		removeAll(tmp)
		return nil, err
	}
	got, err := seal(tmp)
	if err != nil {
		removeAll(tmp)
		return nil, err
	}
	if got > c.cap {
		removeAll(tmp)
		return nil, fmt.Errorf("%w: the input is %d bytes and the node's data cache holds at most %d (the agent's --data-cache-gb)", ErrTooLarge, got, c.cap)
	}
	if err := os.Rename(tmp, c.path(key)); err != nil {
		removeAll(tmp)
		return nil, err
	}
	return &entry{key: key, size: got}, nil
}

// reserveLocked evicts unheld entries until size more bytes fit, as far
// as it can: entries running ranks hold are never evicted, so the cap
// may be passed while they run, and is restored as they are released.
func (c *Cache) reserveLocked(size int64) {
	c.evictUntilLocked(c.cap - size)
}

// evictLocked evicts unheld entries, least recently used first, until
// the cache is within its cap.
func (c *Cache) evictLocked() { c.evictUntilLocked(c.cap) }

func (c *Cache) evictUntilLocked(limit int64) {
	if c.used <= limit {
		return
	}
	var free []*entry
	for _, e := range c.entries {
		if e.refs == 0 {
			free = append(free, e)
		}
	}
	sort.Slice(free, func(i, j int) bool { return free[i].used < free[j].used })
	for _, e := range free {
		if c.used <= limit {
			return
		}
		delete(c.entries, e.key)
		c.used -= e.size
		// Renamed away first, so the key is free at once even while
		// the bytes go.
		p := c.path(e.key)
		gone := filepath.Join(c.dir, "tmp", "evicted-"+e.key.String())
		if os.Rename(p, gone) == nil {
			p = gone
		}
		removeAll(p)
	}
}

// seal makes a filled directory root's (when the agent is root) and
// read-only to all, and returns the bytes it holds.
func seal(dir string) (int64, error) {
	var total int64
	root := os.Geteuid() == 0
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if root {
				os.Lchown(p, 0, 0)
			}
			return nil
		}
		if root {
			if err := os.Lchown(p, 0, 0); err != nil {
				return err
			}
		}
		if d.IsDir() {
			dirs = append(dirs, p) // made read-only last, after their files
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return os.Chmod(p, 0o444)
	})
	if err != nil {
		return 0, err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i], 0o555); err != nil {
			return 0, err
		}
	}
	return total, nil
}

// duSize is the bytes of the regular files under dir.
func duSize(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
		}
		return nil
	})
	return total, err
}

// removeAll removes a tree, first making its directories writable again
// (an agent not running as root cannot remove from a read-only one).
func removeAll(p string) error {
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(q, 0o700)
		}
		return nil
	})
	return os.RemoveAll(p)
}
