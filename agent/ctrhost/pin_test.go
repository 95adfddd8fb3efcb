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

	dir := t.TempDir()
	store := filepath.Join(dir, "storage")
	pinned := Open(ctx, Config{NodeID: "pin-own", WorkDir: dir, PodmanStore: store, OwnPodman: true, Clock: core.SystemClock{}}, log)
	defer pinned.Close()
	if !pinned.lazy || pinned.rt != nil {
		t.Fatalf("pinned: the host's engine was used, want the node's own podman service (not started yet): %+v", pinned.info)
	}
	if info := pinned.Report(ctx); info.StorageRoot != store {
		t.Errorf("pinned: storage root %q, want the node's own %q", info.StorageRoot, store)
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
