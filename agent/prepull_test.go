package agent

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testctr"
)

// privatePodman is the node's own podman service as an agent with no
// shared engine starts it, on a store of its own, reaching no registry
// over HTTP; it is stopped and its store reset at the end. It is pinned
// (OwnPodman): a host whose podman system service answers on
// /run/podman/podman.sock (podman.socket) would otherwise give the agent
// that engine, which lists none of the test's registries.
func privatePodman(t *testing.T) (*Agent, string) {
	t.Helper()
	// podman refuses a run root over 50 characters: a short folder.
	base, err := os.MkdirTemp("", "shoal-pp-")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "podman")
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// The node's own podman, started on first use.
	h := ctrhost.Open(context.Background(), ctrhost.Config{NodeID: "prepull-node", WorkDir: base, ContainerDir: dir,
		PodmanStore: filepath.Join(dir, "storage"), OwnPodman: true, Clock: core.SystemClock{}}, log)
	t.Cleanup(func() {
		h.Close()
		// The host's networks stay (testctr.ResetStore).
		err := testctr.ResetStore(context.Background(), filepath.Join(dir, "containers.conf"), "--root", filepath.Join(dir, "storage"),
			"--runroot", ctrhost.PodmanRunRoot(dir), "--tmpdir", container.TmpDir(dir))
		if err != nil {
			t.Logf("resetting the private store: %v", err)
		}
		os.RemoveAll(base)
	})
	return &Agent{log: log, ctr: h}, dir
}

// A registry added with --insecure reaches the node's running private
// podman service: before, a pull from it fails (the service tries
// HTTPS); once a task names it insecure, the service's registries.conf
// lists it and the pull over HTTP works. The pre-pull reports what it
// pulled and the registry's words for what it could not, and the
// runtime report counts the cache.
func TestInsecureRegistryAndPrepull(t *testing.T) {
	env := testctr.Shared(t)
	a, dir := privatePodman(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, _, err := a.ctr.Runtime(ctx); err != nil {
		t.Fatal(err)
	}
	image := env.Registry.Addr + "/" + testctr.PushedBase
	noop := func(string) {}
	_, err := a.ctr.PrepareImage(ctx, ctrhost.ImageJob{Env: &asset.EnvironmentSpec{Image: image}, Task: &node.ContainerTask{}, Progress: noop, Log: noop})
	if err == nil || !strings.Contains(err.Error(), "HTTPS") {
		t.Fatalf("a pull from an HTTP registry not listed insecure: %v, want the HTTPS failure", err)
	}

	missing := env.Registry.Addr + "/shoal-test/missing:1"
	a.prepull(ctx, &compute.PrepullOrder{Images: []string{image, missing},
		Registries: []compute.RegistryCredential{{Registry: env.Registry.Addr, Insecure: true}}})
	rep := a.prepulls.take()
	if rep == nil || len(rep.Pulled) != 1 || rep.Pulled[0] != image {
		t.Fatalf("prepull report %+v, want %s pulled", rep, image)
	}
	if len(rep.Failed) != 1 || rep.Failed[0].Image != missing || !strings.Contains(rep.Failed[0].Error, "manifest unknown") {
		t.Errorf("prepull failures %+v, want %s with the registry's words", rep.Failed, missing)
	}
	conf, err := os.ReadFile(filepath.Join(dir, "registries.conf"))
	if err != nil || !strings.Contains(string(conf), env.Registry.Addr) {
		t.Errorf("the service's registries.conf does not list %s: %q, %v", env.Registry.Addr, conf, err)
	}
	// The report counts the images in the background: the first after
	// the pull starts a count, and the count marks the info changed for
	// a later sync to carry.
	info := a.ctr.Report()
	for deadline := time.Now().Add(time.Minute); info.CachedImages < 1 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		if a.ctr.TakeInfoChanged() {
			info = a.ctr.Report()
		}
	}
	if info.CachedImages < 1 || info.CacheBytes <= 0 {
		t.Errorf("runtime report %+v, want the pulled image counted in the cache", info)
	}
	a.prepulls.sent(rep)
	if a.prepulls.take() != nil {
		t.Error("the report is sent again after the server took it")
	}
}
