package ctrhost

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
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
