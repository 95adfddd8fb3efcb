package ctrhost

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testctr"
)

func TestMain(m *testing.M) { os.Exit(testctr.Main(m)) }

// A host-wide engine (here the tests' shared podman service standing in
// for podman.socket's /run/podman/podman.sock) is the one an agent finds
// first; a test that set up its own engine pins it (OwnPodman) and gets
// the node's own podman service on its own store whatever the host runs.
// Unpinned, TestInsecureRegistryAndPrepull got the host's service, which
// lists none of its registries.
func TestOwnPodmanIgnoresTheHostsEngine(t *testing.T) {
	env := testctr.Shared(t)
	saved := sharedSockets
	sharedSockets = []string{strings.TrimPrefix(env.Host, "unix://")}
	t.Cleanup(func() { sharedSockets = saved })
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx := context.Background()

	found := Open(ctx, Config{NodeID: "pin-found", WorkDir: t.TempDir(), Clock: core.SystemClock{}}, log)
	defer found.Close()
	if found.lazy || found.rt == nil {
		t.Fatalf("unpinned: the host's engine at %s was not used: %+v", env.Host, found.info)
	}
	// A shared engine's full info (podman gathers its host report for
	// it) is asked when a task first needs the engine, not on the join.
	time.Sleep(500 * time.Millisecond)
	if info := found.Info(); info.StorageRoot != "" || found.TakeInfoChanged() {
		t.Errorf("unpinned: the engine's full info was asked before any task needed it: %+v", info)
	}
	if _, _, err := found.Runtime(ctx); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !found.TakeInfoChanged(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("unpinned: the engine's full info did not come after its first use")
		}
	}
	if info := found.Info(); info.StorageRoot == "" || info.StorageDriver == "" {
		t.Errorf("unpinned, after its first use: storage %q at %q, want the engine's", info.StorageDriver, info.StorageRoot)
	}

	dir := t.TempDir()
	store := filepath.Join(dir, "storage")
	pinned := Open(ctx, Config{NodeID: "pin-own", WorkDir: dir, PodmanStore: store, OwnPodman: true, Clock: core.SystemClock{}}, log)
	defer pinned.Close()
	if !pinned.lazy || pinned.rt != nil {
		t.Fatalf("pinned: the host's engine was used, want the node's own podman service (not started yet): %+v", pinned.info)
	}
	if info := pinned.Report(); info.StorageRoot != store {
		t.Errorf("pinned: storage root %q, want the node's own %q", info.StorageRoot, store)
	}
	// Once its service runs, the node reports its store and free space
	// at once, and the store's driver once the service has opened it
	// (the first count of its images does): what podman's own full info
	// says, without asking it (its host report runs dpkg over every
	// package's file list).
	rt, _, err := pinned.Runtime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info := pinned.Info(); info.StorageRoot != store || info.FreeBytes <= 0 {
		t.Errorf("pinned, its service started: storage at %q, %d bytes free; want %q", info.StorageRoot, info.FreeBytes, store)
	}
	pinned.Report()
	for deadline := time.Now().Add(time.Minute); pinned.Info().StorageDriver == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			ents, _ := os.ReadDir(store)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Fatalf("pinned: the store's driver was not reported after a count of its images (store holds %v; counting %v, usage %+v)", names, pinned.counting, pinned.usage)
		}
	}
	full, err := rt.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info := pinned.Info(); info.StorageDriver != full.StorageDriver || full.StorageRoot != store {
		t.Errorf("pinned: reported driver %q; podman says %q at %q (want %q)", info.StorageDriver, full.StorageDriver, full.StorageRoot, store)
	}
}

// A store's driver is read from its folders: one driver's layers name
// it; none or several name none (the engine's info is asked then).
func TestStoreDriver(t *testing.T) {
	root := t.TempDir()
	if d := storeDriver(root); d != "" {
		t.Errorf("an empty store: driver %q, want none", d)
	}
	if err := os.Mkdir(filepath.Join(root, "vfs-images"), 0o700); err != nil {
		t.Fatal(err)
	}
	if d := storeDriver(root); d != "vfs" {
		t.Errorf("a vfs store: driver %q", d)
	}
	if err := os.Mkdir(filepath.Join(root, "overlay-images"), 0o700); err != nil {
		t.Fatal(err)
	}
	if d := storeDriver(root); d != "" {
		t.Errorf("two drivers' layers: driver %q, want none", d)
	}
}

// Two nodes on one store (here the tests' engine, which both use) that
// need the same image at once pull it once: the second waits for the
// first's pull under the host-wide lock and finds the image; the
// registry is asked for its manifest once.
func TestTwoNodesPullOnce(t *testing.T) {
	env := testctr.Shared(t)
	t.Setenv(LockDirVar, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ref := fmt.Sprintf("%s/shoal-test/once-%d:1", env.Registry.Addr, time.Now().UnixNano())
	if err := env.PodmanCLI(ctx, "push", "--tls-verify=false", env.BaseImage, ref); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var wg sync.WaitGroup
	var mu sync.Mutex
	pulling := 0
	errs := make([]error, 2)
	start := make(chan struct{})
	for i := range 2 {
		h := Open(ctx, Config{NodeID: fmt.Sprintf("once-%d", i), WorkDir: t.TempDir(), ContainerHost: env.Host, Clock: core.SystemClock{}}, log)
		defer h.Close()
		rt, _, err := h.Runtime(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = h.Pull(ctx, rt, ImageJob{Task: &node.ContainerTask{}, Log: func(string) {}, Progress: func(r string) {
				if strings.HasPrefix(r, "pulling ") && !strings.Contains(r, " — ") {
					mu.Lock()
					pulling++
					mu.Unlock()
				}
			}}, ref)
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
	}
	path := strings.SplitN(ref, "/", 2)[1]
	name, tag, _ := strings.Cut(path, ":")
	if n := strings.Count(env.Registry.Log(), `"GET /v2/`+name+`/manifests/`+tag+` `); pulling != 1 || n != 1 {
		t.Errorf("%d nodes pulled, the registry was asked %d times for the manifest; want one pull for the two", pulling, n)
	}
}
