// Package ctrhost is a node's container engine as its agent uses it:
// finding the engine (Docker's daemon, podman's system service, or a
// podman service of the node's own on the host's image store), the images a task needs (pulled with
// its registry logins, built from an uploaded context, derived with a
// conda file), the image cache, subnets' networks, the runtime the node
// reports, and running a rank's processes in containers.
package ctrhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// Container settings of an agent (Config.Containers).
const (
	// ContainersAuto finds an engine: Config.ContainerHost, else Docker's
	// socket when it answers, else podman's system service, else a podman
	// service of the node's own on the host's image store.
	ContainersAuto = ""
	// ContainersOff: this agent runs nothing in containers.
	ContainersOff = "off"
)

// Config is what Open needs of the agent's configuration.
type Config struct {
	// NodeID labels the containers the node starts.
	NodeID string
	// WorkDir is the node's work dir: the node's podman service's
	// folder defaults to WORK_DIR/podman.
	WorkDir string
	// Containers is ContainersAuto or ContainersOff.
	Containers string
	// ContainerHost is the engine's address; empty: find one.
	ContainerHost string
	// ContainerDir is the node's podman service's folder: its socket,
	// configuration and log.
	ContainerDir string
	// PodmanStore is the image store of the node's podman service: empty
	// for podman's default (/var/lib/containers/storage as root), the
	// store `podman build` and `podman pull` use on the host, which the
	// host's nodes share (an image is pulled once for them all); a folder
	// for a store of the node's own.
	PodmanStore string
	// OwnPodman starts the node's podman service without looking for
	// Docker's daemon or podman's system service: a test pins the engine
	// it set up, whatever the host runs.
	OwnPodman bool
	// InsecureRegistries are reached over plain HTTP.
	InsecureRegistries []string
	// ImageCacheBytes caps the node's images (DefaultImageCacheBytes
	// when 0).
	ImageCacheBytes int64
	// Clock orders the image cache's uses.
	Clock core.Clock
}

// DefaultImageCacheBytes caps a node's images when Config.ImageCacheBytes
// is 0: enough for a few CUDA images.
const DefaultImageCacheBytes = 20 << 30

// dockerSocket is where Docker's daemon listens by default.
const dockerSocket = "/var/run/docker.sock"

// podmanSocket is rootful podman's system service (podman.socket).
const podmanSocket = "/run/podman/podman.sock"

// Labels on every container the agent starts: List by shoal.node finds a
// node's leftovers.
const (
	LabelNode = "shoal.node"
	// LabelEngine is the folder of the agent's engine (its podman
	// service): with LabelNode it names the node's own containers, where
	// nodes of several servers (or tests) with the same name share a
	// host's container store.
	LabelEngine  = "shoal.engine"
	LabelAttempt = "shoal.attempt"
	// LabelNetwork marks a subnet's network with its vnet/subnet.
	LabelNetwork = "shoal.subnet"
	LabelRank    = "shoal.rank"
)

// Host is the node's container engine as the agent uses it: the
// engine is found when the agent starts, but the node's podman service
// (the fallback) starts only when the first task needs it, so a node that
// never runs an image pays nothing for it.
type Host struct {
	log      *slog.Logger
	nodeID   string
	dir      string // the node's podman service's folder
	store    string // its image store; "" podman's default (the host's)
	insecure []string
	cacheMax int64
	clock    core.Clock

	// infoMu guards what the node reports, apart from mu: mu is held
	// while the node's podman service starts and while it reloads its
	// registries (seconds, tens of them on a loaded host), and every sync
	// of the agent, its heartbeat, reads the report.
	infoMu sync.Mutex
	// info is what the agent reports on join; infoChanged says the full
	// info came since, or the image cache's counts changed (its next
	// sync carries them).
	info        catalog.ContainerRuntimeInfo
	infoChanged bool
	// infoEngine is the engine info describes, and counted the image
	// cache over it (nil until the engine is open).
	infoEngine container.Runtime
	counted    *container.ImageCache
	// ownStore is the store the node's own podman service was given,
	// whose driver its folders say once the service has opened it (a new
	// store has none until then); "" for other engines.
	ownStore string
	// usage is the image cache's counts as last read, and counting says
	// a read is under way (countImages): a sync carries the last counts
	// and never waits for the engine to list its images. countedAt is
	// when the last read began; dirty says this node changed its images
	// since (a pull, a build, an eviction), and recount that a read was
	// due while one ran, so another follows it.
	usage     imageUsage
	counting  bool
	countedAt time.Time
	dirty     bool
	recount   bool

	// mu guards the engine and its service.
	mu    sync.Mutex
	rt    container.Runtime
	cache *container.ImageCache
	// gpuInfo is what the engine said of the host's GPUs when it was
	// opened: asked once, since podman's info takes most of a second
	// (asking per rank made a container's start five times podman's).
	gpuInfo container.GPUs
	podman  *container.Podman
	// lazy: podman is installed, its service not yet started.
	lazy bool
	// wantFull: the engine's full info is to be asked on its first use.
	wantFull bool
	// openErr is why the engine could not be opened when a task needed it.
	openErr error

	// building serializes builds and pulls of one image on this node: a
	// second job with the same context waits for the first's build.
	building keyedMutex
	// scope names the image store for the host-wide locks (hostlock.go)
	// that serialize one image's pull or build across the nodes sharing
	// the store.
	scope string
}

// Open finds the node's engine as cfg says. It never fails: a
// host without an engine reports why (ContainerRuntimeInfo.Error).
func Open(ctx context.Context, cfg Config, log *slog.Logger) *Host {
	h := &Host{log: log, nodeID: cfg.NodeID, insecure: cfg.InsecureRegistries, cacheMax: cfg.ImageCacheBytes, clock: cfg.Clock,
		dir: cfg.ContainerDir, store: cfg.PodmanStore}
	if h.cacheMax <= 0 {
		h.cacheMax = DefaultImageCacheBytes
	}
	if h.dir == "" {
		h.dir = filepath.Join(cfg.WorkDir, "podman")
	}
	switch {
	case cfg.Containers == ContainersOff:
		h.info.Error = "containers are off on this node (shoal agent --containers off)"
		return h
	case cfg.Containers != ContainersAuto:
		h.info.Error = fmt.Sprintf("--containers %q: must be empty (find an engine) or %q", cfg.Containers, ContainersOff)
		return h
	case cfg.ContainerHost != "":
		h.openHost(ctx, cfg.ContainerHost)
		return h
	}
	// Docker's daemon, else podman's system service (podman.socket, or
	// `podman system service`): an engine the host's nodes share, whose
	// images are those `docker build` or `podman build` made. Without
	// either, a podman service of the node's own on the host's store
	// (below): the images are the host's all the same.
	for _, sock := range sharedSockets {
		if cfg.OwnPodman {
			break
		}
		if st, err := os.Stat(sock); err == nil && st.Mode()&os.ModeSocket != 0 {
			if h.openHost(ctx, "unix://"+sock) {
				return h
			}
		}
	}
	version, err := podmanVersion(ctx)
	if err != nil {
		h.info = catalog.ContainerRuntimeInfo{Error: "no container engine: no Docker daemon at " + dockerSocket + " and " + err.Error()}
		return h
	}
	h.lazy = true
	root := h.storeRoot()
	free := DirFree(root)
	if free < 0 {
		free = DirFree(cfg.WorkDir)
	}
	h.info = catalog.ContainerRuntimeInfo{Engine: "podman", Version: version, StorageDriver: storeDriver(root),
		StorageRoot: root, FreeBytes: free}
	// The GPUs are the host's, whichever engine gives them: reported
	// before the service starts, as once it runs.
	if g, err := container.HostGPUs(); err == nil {
		h.info.GPUs = runtimeInfo(container.Info{GPUs: g}).GPUs
	}
	return h
}

// sharedSockets are the engines a host's nodes share, in the order they
// are looked for: Docker's daemon, then podman's system service.
var sharedSockets = []string{dockerSocket, podmanSocket}

// storeRoot is the node's podman service's image store: its own, or
// podman's default for this user (as root /var/lib/containers/storage).
func (h *Host) storeRoot() string {
	if h.store != "" {
		return h.store
	}
	return DefaultPodmanStore()
}

// DefaultPodmanStore is podman's default image store for this user: the
// one the podman CLI uses (containers-storage.conf(5)).
func DefaultPodmanStore() string {
	if os.Geteuid() == 0 {
		return "/var/lib/containers/storage"
	}
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" {
		home, _ := os.UserHomeDir()
		data = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(data, "containers", "storage")
}

// openHost opens the engine at host and fills info from it.
func (h *Host) openHost(ctx context.Context, host string) bool {
	h.scope = "engine " + host
	e, err := container.Open(ctx, container.Config{Host: host, EnginePID: socketPeerPID(host)})
	if err != nil {
		h.info = catalog.ContainerRuntimeInfo{Error: err.Error()}
		return false
	}
	if err := h.use(ctx, e, false); err != nil {
		e.Close()
		h.info = catalog.ContainerRuntimeInfo{Error: err.Error()}
		return false
	}
	return true
}

// use makes e the node's engine: its info, an image cache over it, and
// the leftovers of an earlier agent of this node removed. own says e is
// the node's own podman service, on the store at h.storeRoot().
func (h *Host) use(ctx context.Context, e container.Runtime, own bool) error {
	var info container.Info
	quick, ok := e.(interface{ QuickInfo() container.Info })
	if ok {
		// What the engine's ping said is enough to join with; its full
		// info (storage, free space) takes podman most of a second and
		// follows on a later sync, not on the node's way to its first
		// job or instance.
		info = quick.QuickInfo()
		if own && h.store != "" {
			// The node started the service on a store it named: the
			// store's folders say its driver (once the service has
			// opened it: countImages looks again) and the file system
			// its free space. Podman's full info would gather its host
			// report for them too, running dpkg over every installed
			// package's file list: about 1.6 CPU-s for every node that
			// starts a service.
			root := h.store
			info.StorageDriver, info.StorageRoot, info.FreeBytes = storeDriver(root), root, DirFree(root)
		} else {
			// An engine the node shares (Docker's daemon, podman's
			// system service, --container-host), or its own service on
			// podman's default store (storage.conf may move it): its
			// full info is asked when a task first needs the engine
			// (Runtime), so that a node that never runs a container
			// does not make a podman gather its host report.
			h.wantFull = true
		}
	} else {
		var err error
		if info, err = e.Info(ctx); err != nil {
			return err
		}
	}
	cache, err := container.NewImageCache(container.CacheConfig{Store: e, MaxBytes: h.cacheMax, Clock: h.clock})
	if err != nil {
		return err
	}
	h.rt, h.cache, h.gpuInfo = e, cache, info.GPUs
	h.infoMu.Lock()
	h.info, h.infoEngine, h.counted = runtimeInfo(info), e, cache
	if own {
		h.ownStore = h.store
	}
	h.infoMu.Unlock()
	h.removeLeftovers(ctx)
	return nil
}

// storeDrivers are the drivers of containers/storage, whose store keeps
// each driver's image records in a folder named after it
// (overlay-images), made when a service first opens the store.
var storeDrivers = []string{"overlay", "vfs", "btrfs", "zfs", "aufs", "devmapper"}

// storeDriver is the driver of the image store at root, from its
// folders: "" when none or several drivers' folders are there (the
// engine's info says which it uses then).
func storeDriver(root string) string {
	found := ""
	for _, d := range storeDrivers {
		if st, err := os.Stat(filepath.Join(root, d+"-images")); err == nil && st.IsDir() {
			if found != "" {
				return ""
			}
			found = d
		}
	}
	return found
}

// fullInfo completes the node's report with the engine's full info.
func (h *Host) fullInfo(e container.Runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	info, err := e.Info(ctx)
	if err != nil {
		h.log.Warn("reading the container engine's info failed", "err", err)
		return
	}
	h.infoMu.Lock()
	defer h.infoMu.Unlock()
	if h.infoEngine == e {
		h.info = runtimeInfo(info)
		h.infoChanged = true
	}
}

// TakeInfoChanged reports whether the runtime's info changed since the
// last call (the full info came), for the next sync to carry it.
func (h *Host) TakeInfoChanged() bool {
	h.infoMu.Lock()
	defer h.infoMu.Unlock()
	c := h.infoChanged
	h.infoChanged = false
	return c
}

// runtimeInfo is what the node reports of an engine.
func runtimeInfo(info container.Info) catalog.ContainerRuntimeInfo {
	gpus := info.GPUs.CDI
	if len(gpus) == 0 {
		gpus = info.GPUs.DevNodes
	}
	return catalog.ContainerRuntimeInfo{Engine: info.Engine, Version: info.Version, StorageDriver: info.StorageDriver,
		StorageRoot: info.StorageRoot, FreeBytes: info.FreeBytes, GPUs: gpus}
}

// removeLeftovers stops and removes the containers an earlier agent of
// this node left (it was killed before it could): their ranks were
// reported lost, or will be, and must not run on unseen.
func (h *Host) removeLeftovers(ctx context.Context) {
	// By the node's name and its engine's folder: another server's node
	// of the same name on a shared store is not this one's (e2e caught
	// a test's new cpu-cluster-n1 removing another's running job).
	list, err := h.rt.List(ctx, h.NodeLabels(h.nodeID))
	if err != nil {
		h.log.Warn("listing the containers an earlier agent left failed", "err", err)
		return
	}
	for _, c := range list {
		h.log.Info("removing a container an earlier agent of this node left", "container", c.ID, "attempt", c.Labels[LabelAttempt])
		if err := h.rt.Remove(ctx, c.ID); err != nil {
			h.log.Warn("removing a leftover container failed", "container", c.ID, "err", err)
		}
	}
}

// Runtime is the engine, starting the node's podman service on first
// use.
func (h *Host) Runtime(ctx context.Context) (container.Runtime, *container.ImageCache, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rt != nil {
		if h.wantFull {
			h.wantFull = false
			go h.fullInfo(h.rt)
		}
		return h.rt, h.cache, nil
	}
	if h.openErr != nil {
		return nil, nil, h.openErr
	}
	if !h.lazy {
		return nil, nil, &container.Error{Kind: container.ErrRuntimeMissing, Op: "run a container", Msg: h.Info().Error}
	}
	if err := h.startPodman(ctx); err != nil {
		h.openErr = err
		h.infoMu.Lock()
		h.info.Error = err.Error()
		h.infoMu.Unlock()
		return nil, nil, err
	}
	if h.wantFull {
		h.wantFull = false
		go h.fullInfo(h.rt)
	}
	return h.rt, h.cache, nil
}

// PodmanRunRoot is the run root of a node's store of its own
// (Config.PodmanStore): podman (4.3) refuses
// one longer than 50 bytes, which a node's work dir under the nodes dir
// (/var/lib/shoal-nodes/<server>/<node>/...) always is, so it goes under
// /run (the temporary dir without root), named by the work dir.
func PodmanRunRoot(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	base := "/run"
	if os.Geteuid() != 0 {
		base = os.TempDir()
	}
	return filepath.Join(base, "shoal-podman-"+hex.EncodeToString(sum[:6]))
}

// startPodman starts the node's podman service on the host's default
// store (podman's own run root and temporary dir, which every podman on
// that store shares), or on the node's own store (Config.PodmanStore)
// with a run root of its own. Its socket, configuration (runc, ulimits
// within the host's, the insecure registries) and log are the node's.
func (h *Host) startPodman(ctx context.Context) error {
	dir := h.dir
	// A unix socket's path is at most 107 bytes: a deep work dir gets its
	// socket folder under the temporary folder, named by the work dir.
	if len(filepath.Join(dir, "podman.sock")) > 100 {
		sum := sha256.Sum256([]byte(dir))
		dir = filepath.Join(os.TempDir(), "shoal-podman-"+hex.EncodeToString(sum[:6]))
	}
	stopStale(dir)
	pc := container.PodmanConfig{Dir: dir, InsecureRegistries: h.insecure}
	if h.store != "" {
		pc.Root, pc.RunRoot = h.store, PodmanRunRoot(h.dir)
	}
	h.scope = "podman store " + h.storeRoot()
	p, err := container.StartPodman(ctx, pc)
	if err != nil {
		return err
	}
	_ = os.WriteFile(filepath.Join(dir, "podman.pid"), []byte(fmt.Sprint(p.PID())), 0o600)
	e, err := container.Open(ctx, container.Config{Host: p.Host, EnginePID: p.PID()})
	if err == nil {
		err = h.use(ctx, e, true)
	}
	if err != nil {
		_ = p.Close()
		return err
	}
	h.podman = p
	h.log.Info("started the node's podman service", "socket", p.Host, "storage", h.storeRoot())
	return nil
}

// stopStale stops the podman service an earlier agent of this node
// started and did not stop (it was killed): two services on one store
// would both run, and the earlier one would never end.
func stopStale(dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "podman.pid"))
	if err != nil {
		return
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil || pid <= 1 {
		return
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), filepath.Join(dir, "podman.sock")) {
		return // gone, or the pid is another process's now
	}
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Signal(os.Interrupt)
		for range 50 {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		_ = p.Kill()
	}
}

// Close stops the node's podman service (the engine of a node whose
// agent exits); the containers were stopped and removed before. The
// host's store and its images stay: other nodes use them. So do the
// subnets' networks its ranks and instance joined (container.Networker).
func (h *Host) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.rt.(interface{ Close() error }); ok {
		_ = c.Close()
	}
	if h.podman != nil {
		_ = h.podman.Close()
		h.podman = nil
		if h.store == "" {
			return // the host's store, its run root and mounts are shared
		}
		// Its run root is outside the node's folder (PodmanRunRoot):
		// released with the node's work dir it would stay behind.
		_ = os.RemoveAll(PodmanRunRoot(h.dir))
		// The overlay driver mounts its folder over itself and leaves it
		// mounted when the service stops: the node's work dir (an
		// instance's, removed on delete) could not be removed then.
		_ = unix.Unmount(filepath.Join(h.store, "overlay"), unix.MNT_DETACH)
	}
}

// Info is the runtime info the node reports, without its image cache's
// counts: which engine, or why there is none.
func (h *Host) Info() catalog.ContainerRuntimeInfo {
	h.infoMu.Lock()
	defer h.infoMu.Unlock()
	return h.info
}

// imageUsage is how many images the node's engine holds and their size.
type imageUsage struct {
	images int
	bytes  int64
}

// usageTimeout bounds one read of the image cache's counts: a podman
// that does not answer within it leaves the last counts in place.
const usageTimeout = 30 * time.Second

// countEvery paces the reads of the image cache's counts that this
// node's own changes did not call for: on a store that several nodes
// share the counts move with the others' pulls, and each change the
// node reports is a write on the server.
const countEvery = time.Minute

// Report is the runtime info the node reports, with its image cache's
// counts as last read once the engine is open (a podman service not yet
// started has none to count). It does not wait for the engine: when a
// read is due (the first, one after this node changed its images, or
// countEvery after the last) it starts one, or asks for another after
// the one under way, and returns the last counts; a read that finds them
// changed marks the info changed (TakeInfoChanged), so that a later sync
// carries them. An agent's sync is its heartbeat, and podman has taken
// 17–20 s to list its images on a loaded host, longer than a node's
// lease.
func (h *Host) Report() *catalog.ContainerRuntimeInfo {
	h.infoMu.Lock()
	info, cache := h.info, h.counted
	info.CachedImages, info.CacheBytes = h.usage.images, h.usage.bytes
	start := false
	if cache != nil && (h.countedAt.IsZero() || h.dirty || h.now().Sub(h.countedAt) >= countEvery) {
		if h.counting {
			h.recount = true
		} else {
			h.counting, h.dirty, h.countedAt, start = true, false, h.now(), true
		}
	}
	h.infoMu.Unlock()
	if start {
		go h.countImages(cache)
	}
	return &info
}

// ImagesChanged records that this node changed the engine's images (it
// pulled, built or evicted one): the next sync carries the report, and
// the report counts them again.
func (h *Host) ImagesChanged() {
	h.infoMu.Lock()
	defer h.infoMu.Unlock()
	h.dirty, h.infoChanged = true, true
}

// ReportAgain marks the info changed again: a sync that carried it
// failed.
func (h *Host) ReportAgain() {
	h.infoMu.Lock()
	defer h.infoMu.Unlock()
	h.infoChanged = true
}

// now is the host's clock's time.
func (h *Host) now() time.Time {
	if h.clock == nil {
		return core.SystemClock{}.Now()
	}
	return h.clock.Now()
}

// countImages reads the image cache's counts for Report, again while a
// Report asked for another during a read.
func (h *Host) countImages(cache *container.ImageCache) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), usageTimeout)
		n, size, err := cache.Usage(ctx)
		cancel()
		h.infoMu.Lock()
		if err != nil {
			h.log.Debug("counting the node's images failed", "err", err)
		} else if h.counted == cache {
			if u := (imageUsage{n, size}); u != h.usage {
				h.usage, h.infoChanged = u, true
			}
			if h.ownStore != "" && h.info.StorageDriver == "" {
				// Listing the images opened the store: one driver's
				// folder names it; none or several leave it to the
				// engine's full info, asked once.
				if d := storeDriver(h.ownStore); d != "" {
					h.info.StorageDriver, h.infoChanged = d, true
				} else {
					go h.fullInfo(h.infoEngine)
				}
				h.ownStore = ""
			}
		}
		if !h.recount {
			h.counting = false
			h.infoMu.Unlock()
			return
		}
		h.recount, h.dirty, h.countedAt = false, false, h.now()
		h.infoMu.Unlock()
	}
}

// insecureReloadTimeout bounds the wait for a podman service to reload
// its registries.conf.
const insecureReloadTimeout = 10 * time.Second

// EnsureInsecure makes the node's engine reach the insecure registries
// among creds (listed so with `shoal registry add --insecure`) over
// plain HTTP. The node's podman service is told (its registries.conf
// rewritten and reloaded), or starts with them; an engine the node does
// not run (Docker, or --container-host) keeps its own list, and a pull
// from a registry it does not list fails saying where to add it.
func (h *Host) EnsureInsecure(ctx context.Context, creds []compute.RegistryCredential) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var added []string
	for _, c := range creds {
		if c.Insecure && !slices.Contains(h.insecure, c.Registry) {
			added = append(added, c.Registry)
		}
	}
	if len(added) == 0 || (h.podman == nil && !h.lazy) {
		return nil
	}
	next := append(slices.Clone(h.insecure), added...)
	if h.podman == nil {
		h.insecure = next // the service starts with them
		return nil
	}
	if err := h.podman.SetInsecureRegistries(next); err != nil {
		return fmt.Errorf("listing insecure registries %v for the podman service: %w", added, err)
	}
	h.insecure = next
	h.log.Info("the podman service reaches these registries over HTTP now", "registries", added)
	deadline := time.Now().Add(insecureReloadTimeout)
	for {
		info, err := h.rt.Info(ctx)
		if err == nil && allInsecure(info, added) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the podman service did not reload its registries.conf within %s (insecure registries %v)", insecureReloadTimeout, added)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// allInsecure reports whether the engine reaches every one of regs over
// HTTP.
func allInsecure(info container.Info, regs []string) bool {
	for _, r := range regs {
		if !info.Insecure(r) {
			return false
		}
	}
	return true
}

// socketPeerPID is the pid of the process serving a unix socket address
// (SO_PEERCRED), 0 when unknown: the containers an engine starts cannot
// get ulimits above the engine's own (podman caps its nproc), so the
// defaults are bounded by that process's limits.
func socketPeerPID(host string) int {
	path, ok := strings.CutPrefix(host, "unix://")
	if !ok {
		return 0
	}
	conn, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return 0
	}
	defer conn.Close()
	raw, err := conn.(*net.UnixConn).SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	_ = raw.Control(func(fd uintptr) {
		if cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
			pid = int(cred.Pid)
		}
	})
	return pid
}

// podmanVersion is the installed podman's version, without starting its
// service.
func podmanVersion(ctx context.Context) (string, error) {
	path, err := exec.LookPath("podman")
	if err != nil {
		return "", errors.New("podman is not installed")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "version", "--format", "{{.Client.Version}}").Output()
	if err != nil {
		return "", fmt.Errorf("podman version: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// keyedMutex is one mutex per key.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// lock locks key's mutex and returns its unlock.
func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*sync.Mutex{}
	}
	m := k.locks[key]
	if m == nil {
		m = &sync.Mutex{}
		k.locks[key] = m
	}
	k.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// NodeLabels are the labels of every container this node's agent
// creates (LabelNode and LabelEngine), in a new map the caller may add
// to; a nil Host (no engine) gives LabelNode alone.
func (h *Host) NodeLabels(nodeID string) map[string]string {
	if h == nil {
		return map[string]string{LabelNode: nodeID}
	}
	return map[string]string{LabelNode: nodeID, LabelEngine: h.dir}
}
