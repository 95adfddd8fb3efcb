package datacache_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/shoal-ml/shoal/agent/datacache"
	"github.com/shoal-ml/shoal/internal/testenv"
	"github.com/shoal-ml/shoal/storage/objstore"
)

func key(s string) datacache.Key {
	return datacache.KeyOf("s3://bucket/"+s, []objstore.Object{{Key: s, Size: 1, ETag: "e"}})
}

// writer fills an entry with n bytes in one file and counts its calls.
func writer(n int, calls *atomic.Int32) func(string) error {
	return func(dir string) error {
		calls.Add(1)
		return os.WriteFile(filepath.Join(dir, "f"), make([]byte, n), 0o644)
	}
}

func TestKeyOf(t *testing.T) {
	a := []objstore.Object{{Key: "a", Size: 1, ETag: "1"}, {Key: "b", Size: 2, ETag: "2"}}
	b := []objstore.Object{a[1], a[0]}
	if datacache.KeyOf("src", a) != datacache.KeyOf("src", b) {
		t.Fatal("order of the listing changed the key")
	}
	for _, other := range []struct {
		src  string
		objs []objstore.Object
	}{
		{"src2", a},
		{"src", []objstore.Object{{Key: "a", Size: 1, ETag: "changed"}, a[1]}},
		{"src", []objstore.Object{{Key: "a", Size: 3, ETag: "1"}, a[1]}},
		{"src", a[:1]},
		{"src1", []objstore.Object{{Key: ":a"}}}, // field boundaries count
	} {
		if datacache.KeyOf(other.src, other.objs) == datacache.KeyOf("src", a) {
			t.Errorf("%v: same key", other)
		}
	}
}

// Two concurrent Gets of one key fetch once and share the entry, which
// is read-only.
func TestGetFetchesOnce(t *testing.T) {
	c, err := datacache.Open(t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	release := make(chan struct{})
	fill := func(dir string) error {
		calls.Add(1)
		<-release // both Gets are in before the fill ends
		return os.WriteFile(filepath.Join(dir, "f"), []byte("data"), 0o644)
	}
	var wg sync.WaitGroup
	entries := make([]*datacache.Entry, 8)
	errs := make([]error, 8)
	started := make(chan struct{}, 8)
	for i := range entries {
		wg.Go(func() {
			started <- struct{}{}
			entries[i], errs[i] = c.Get(context.Background(), key("k"), 4, fill)
		})
	}
	for range entries {
		<-started
	}
	close(release)
	wg.Wait()
	if calls.Load() != 1 {
		t.Fatalf("%d fills for one key, want 1", calls.Load())
	}
	for i, e := range entries {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if e.Dir() != entries[0].Dir() {
			t.Fatalf("different dirs %s %s", e.Dir(), entries[0].Dir())
		}
	}
	b, err := os.ReadFile(filepath.Join(entries[0].Dir(), "f"))
	if string(b) != "data" || err != nil {
		t.Fatalf("read %q %v", b, err)
	}
	info, _ := os.Stat(filepath.Join(entries[0].Dir(), "f"))
	dinfo, _ := os.Stat(entries[0].Dir())
	if info.Mode().Perm() != 0o444 || dinfo.Mode().Perm() != 0o555 {
		t.Fatalf("modes %v %v, want read-only", info.Mode(), dinfo.Mode())
	}
	for _, e := range entries {
		e.Release()
	}
	// A later Get is served from the cache.
	e, err := c.Get(context.Background(), key("k"), 4, fill)
	if err != nil || calls.Load() != 1 {
		t.Fatalf("cached get: %v, %d fills", err, calls.Load())
	}
	e.Release()
}

// Unheld entries go least recently used first when the cap is passed;
// held ones stay.
func TestEviction(t *testing.T) {
	c, err := datacache.Open(t.TempDir(), 300)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	get := func(k string) *datacache.Entry {
		t.Helper()
		e, err := c.Get(context.Background(), key(k), 100, writer(100, &calls))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	a := get("a")
	b := get("b")
	cc := get("c")
	b.Release()
	cc.Release()
	get("c").Release() // c is now more recent than b
	a.Release()
	a = get("a") // a: the most recent, and held
	if calls.Load() != 3 {
		t.Fatalf("%d fills, want 3", calls.Load())
	}
	d := get("d") // over the cap: b goes (least recent unheld)
	if c.Used() > 300 {
		t.Fatalf("used %d over the cap", c.Used())
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(a.Dir()), key("b").String())); !os.IsNotExist(err) {
		t.Fatalf("b not evicted: %v", err)
	}
	before := calls.Load()
	get("c").Release()
	if calls.Load() != before {
		t.Fatal("c was evicted instead of b")
	}
	get("b").Release() // refetched
	if calls.Load() != before+1 {
		t.Fatal("b was not refetched")
	}
	if _, err := os.Stat(filepath.Join(a.Dir(), "f")); err != nil {
		t.Fatalf("held entry a evicted: %v", err)
	}
	a.Release()
	d.Release()

	// A restarted cache keeps its entries.
	c2, err := datacache.Open(filepath.Dir(filepath.Dir(a.Dir())), 300)
	if err != nil {
		t.Fatal(err)
	}
	if c2.Used() != c.Used() {
		t.Fatalf("reopened with %d bytes, had %d", c2.Used(), c.Used())
	}
	n := calls.Load()
	e, err := c2.Get(context.Background(), key("b"), 100, writer(100, &calls))
	if err != nil || calls.Load() != n {
		t.Fatalf("reopened cache refetched: %v", err)
	}
	e.Release()
}

// An input larger than the cap fails at once, saying both sizes; one
// whose fill finds it larger than its listing said fails too.
func TestCap(t *testing.T) {
	c, _ := datacache.Open(t.TempDir(), 1000)
	var calls atomic.Int32
	_, err := c.Get(context.Background(), key("big"), 1001, writer(1001, &calls))
	if !errors.Is(err, datacache.ErrTooLarge) || !strings.Contains(err.Error(), "1001") || !strings.Contains(err.Error(), "1000") || calls.Load() != 0 {
		t.Fatalf("too large: %v (%d fills)", err, calls.Load())
	}
	_, err = c.Get(context.Background(), key("liar"), 10, writer(2000, &calls))
	if !errors.Is(err, datacache.ErrTooLarge) || c.Used() != 0 {
		t.Fatalf("fill over the cap: %v, used %d", err, c.Used())
	}
}

// A failed fill leaves nothing: the next Get fills afresh, and concurrent
// waiters get the failure's words.
func TestFailedFill(t *testing.T) {
	dir := t.TempDir()
	c, _ := datacache.Open(dir, 1000)
	boom := errors.New("get s3://b/k: HTTP 403 AccessDenied: denied")
	_, err := c.Get(context.Background(), key("k"), 10, func(d string) error {
		os.WriteFile(filepath.Join(d, "half"), []byte("x"), 0o644)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	for _, sub := range []string{"entries", "tmp"} {
		des, _ := os.ReadDir(filepath.Join(dir, sub))
		if len(des) != 0 {
			t.Fatalf("%s holds %v after a failed fill", sub, des)
		}
	}
	var calls atomic.Int32
	e, err := c.Get(context.Background(), key("k"), 10, writer(10, &calls))
	if err != nil || calls.Load() != 1 {
		t.Fatalf("refill: %v", err)
	}
	e.Release()
	e.Release() // twice is harmless
}

// A Get waiting on another's fill whose caller gave up fills afresh
// rather than failing with the other caller's cancellation.
func TestWaiterOutlivesCancelledFiller(t *testing.T) {
	c, _ := datacache.Open(t.TempDir(), 1000)
	ctx1, cancel1 := context.WithCancel(context.Background())
	entered := make(chan struct{})
	done1 := make(chan error, 1)
	go func() {
		_, err := c.Get(ctx1, key("k"), 4, func(dir string) error {
			close(entered)
			<-ctx1.Done()
			return ctx1.Err()
		})
		done1 <- err
	}()
	<-entered
	done2 := make(chan error, 1)
	var calls atomic.Int32
	go func() {
		e, err := c.Get(context.Background(), key("k"), 4, writer(4, &calls))
		if err == nil {
			e.Release()
		}
		done2 <- err
	}()
	cancel1()
	if err := <-done1; !errors.Is(err, context.Canceled) {
		t.Fatalf("first: %v", err)
	}
	if err := <-done2; err != nil || calls.Load() != 1 {
		t.Fatalf("second: %v after %d fills, want its own fill", err, calls.Load())
	}
}

// Entries are root's when the agent is root.
func TestEntriesRootOwned(t *testing.T) {
	testenv.Root(t, "makes files root's, as the agent does")
	c, _ := datacache.Open(t.TempDir(), 1000)
	e, err := c.Get(context.Background(), key("k"), 4, func(dir string) error {
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, []byte("data"), 0o666); err != nil {
			return err
		}
		return os.Chown(p, 1000, 1000) // as a tool that keeps a source's owner might
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Release()
	info, _ := os.Stat(filepath.Join(e.Dir(), "f"))
	if st := info.Sys().(*syscall.Stat_t); st.Uid != 0 || st.Gid != 0 {
		t.Fatalf("owner %d:%d, want root's", st.Uid, st.Gid)
	}
}

// The cache holds every workspace's inputs: its folders are the agent's
// alone (a job reaches an entry only where the agent mounts it), and a
// folder an older agent left open is closed.
func TestCacheClosedToOthers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	if err := os.MkdirAll(filepath.Join(dir, "entries"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := datacache.Open(dir, 1<<20); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Join(dir, "entries"), filepath.Join(dir, "tmp")} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s is %v, want 0700", d, fi.Mode().Perm())
		}
	}
}

// A registered version's key is its workspace's and place's: another
// workspace, place or version is another entry, and no listing's key is
// ever a version's.
func TestKeyOfVersion(t *testing.T) {
	k := datacache.KeyOfVersion("src", "ws", "iris:1")
	for _, other := range []datacache.Key{
		datacache.KeyOfVersion("src", "ws2", "iris:1"),
		datacache.KeyOfVersion("src2", "ws", "iris:1"),
		datacache.KeyOfVersion("src", "ws", "iris:2"),
		datacache.KeyOfVersion("src", "wsiris:1", ""), // field boundaries count
		datacache.KeyOf("src", nil),
	} {
		if other == k {
			t.Errorf("same key as %s", k)
		}
	}
}

// Lookup holds an entry the cache has whole, and never fills one.
func TestLookup(t *testing.T) {
	c, err := datacache.Open(t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Lookup(key("k")); ok {
		t.Fatal("an empty cache found an entry")
	}
	e, err := c.Get(context.Background(), key("k"), 4, func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "f"), []byte("data"), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Release()
	got, ok := c.Lookup(key("k"))
	if !ok {
		t.Fatal("a filled entry was not found")
	}
	defer got.Release()
	if b, err := os.ReadFile(filepath.Join(got.Dir(), "f")); err != nil || string(b) != "data" {
		t.Errorf("entry holds %q %v", b, err)
	}
}
