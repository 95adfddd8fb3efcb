package container

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/client"
	"golang.org/x/sync/singleflight"
)

// Engine is the Runtime over the Docker Engine API, served by Docker or
// by `podman system service`.
type Engine struct {
	cli  *client.Client
	host string
	// hostLimits are this host's hard limits for the ulimits a Spec
	// defaults (nofile, nproc) and may not exceed.
	hostLimits map[string]int64
	// podman is true when the engine is podman's service, which differs
	// from Docker in how it takes CDI devices.
	podman bool

	mu      sync.Mutex
	copying map[string]*logCopy // container id → the copy of its output
	// logFollowGrace bounds how long Wait waits for a log follow after
	// the container exited (logFollowGrace; tests shorten it).
	logFollowGrace time.Duration
	// followEnding, in tests only, wraps each log follow's stream.
	followEnding func(io.ReadCloser) io.ReadCloser
	// engine and version are what the ping said (identify).
	engine, version string
	// lastInfo is the engine's latest Info, which checkInsecure reads
	// before asking again: podman's info takes most of a second.
	lastInfo *Info
	// infoFlight shares one Info request among the callers that ask
	// while it is under way.
	infoFlight singleflight.Group
}

var _ Runtime = (*Engine)(nil)

// Config says which engine to open.
type Config struct {
	// Host is the engine's address: "unix:///var/run/docker.sock", or a
	// podman service's socket (StartPodman's Podman.Host).
	Host string
	// EnginePID, when the engine runs on this host with a known process
	// (StartPodman's Podman.PID), bounds the default ulimits by that
	// process's hard limits too: a container cannot get more than the
	// engine that starts it has (podman caps its own nproc at 32768).
	EnginePID int
}

// Open connects to the engine at cfg.Host and negotiates the API
// version (podman 4 serves 1.41, Docker 28 1.51: the client speaks the
// lower). ErrRuntimeMissing when nothing answers there.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.Host == "" {
		return nil, errorf(ErrInvalid, "open engine", "Host is required (unix:///var/run/docker.sock or a podman service's socket)")
	}
	cli, err := client.NewClientWithOpts(client.WithHost(cfg.Host), client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, errorf(ErrInvalid, "open engine", "host %q: %v", cfg.Host, err)
	}
	// One ping: the API version is negotiated from its answer, and
	// podman names itself (and its version) in its headers. The
	// engine's /version and /info are slow on podman (it runs runc and
	// conmon to report them, and sums its store): most of a second each.
	ping, err := cli.Ping(ctx)
	if err != nil {
		cli.Close()
		return nil, errorf(ErrRuntimeMissing, "open engine", "nothing answers at %s: %v", cfg.Host, err)
	}
	cli.NegotiateAPIVersionPing(ping)
	limits, err := hardLimits(cfg.EnginePID)
	if err != nil {
		cli.Close()
		return nil, err
	}
	e := &Engine{cli: cli, host: cfg.Host, hostLimits: limits, copying: map[string]*logCopy{}, logFollowGrace: logFollowGrace}
	e.engine, e.version = e.identify(ctx)
	e.podman = e.engine == "podman"
	return e, nil
}

// identify names the engine and its version from a ping's headers:
// podman's service sends Libpod-Api-Version, Docker's a Server header
// ("Docker/27.3.1 (linux)"). It asks /version only when neither says.
func (e *Engine) identify(ctx context.Context) (engine, version string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://engine/_ping", nil)
	if err == nil {
		if resp, err := e.cli.HTTPClient().Do(req); err == nil {
			resp.Body.Close()
			if v := resp.Header.Get("Libpod-Api-Version"); v != "" {
				return "podman", v
			}
			if v, ok := strings.CutPrefix(resp.Header.Get("Server"), "Docker/"); ok {
				return "docker", strings.Fields(v + " ")[0]
			}
		}
	}
	ver, err := e.cli.ServerVersion(ctx)
	if err != nil {
		return "docker", ""
	}
	if isPodman(ver.Components) {
		return "podman", ver.Version
	}
	return "docker", ver.Version
}

// QuickInfo is what Open learnt of the engine (which one, its version)
// with the host's GPUs: enough to say the host runs containers, without
// Info's slow calls. Storage, free space and insecure registries are
// Info's.
func (e *Engine) QuickInfo() Info {
	gpus, _ := hostGPUs(cdiSpecDirs, "/dev")
	return Info{Engine: e.engine, Version: e.version, APIVersion: e.cli.ClientVersion(), GPUs: gpus, FreeBytes: -1}
}

// Close closes the connection to the engine; containers keep running.
func (e *Engine) Close() error { return e.cli.Close() }

// Host is the address the engine was opened at.
func (e *Engine) Host() string { return e.host }

// Info describes the engine: which one and its version (what Open's
// ping said), its storage, the registries it reaches over HTTP, and the
// GPUs this host can give containers. Its slices are shared with the
// other callers of a shared answer: read them, do not change them.
//
// Calls made while one is under way share its answer (a node's join and
// its first pull from an insecure registry ask at once), since each
// costs podman over a second of CPU; a caller that must see a change
// made since (SetInsecureRegistries) asks again until it does.
func (e *Engine) Info(ctx context.Context) (Info, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, fmt.Errorf("engine info: %w", err)
	}
	ch := e.infoFlight.DoChan("info", func() (any, error) {
		// Not the first caller's context: its end would fail the
		// others' waits too.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), infoTimeout)
		defer cancel()
		return e.info(ctx)
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return Info{}, r.Err
		}
		return r.Val.(Info), nil
	case <-ctx.Done():
		return Info{}, fmt.Errorf("engine info: %w", ctx.Err())
	}
}

// infoTimeout bounds one shared Info request (podman's takes seconds
// on a loaded host).
const infoTimeout = 2 * time.Minute

// info asks the engine for Info.
func (e *Engine) info(ctx context.Context) (Info, error) {
	const op = "engine info"
	// Which engine and its version are what Open's ping said; /version
	// is asked only when the ping did not say. On podman each of /version
	// and /info gathers the whole host report, running `dpkg -S` and
	// `dpkg-query -W` (or rpm) to name the packages of runc, conmon and
	// slirp4netns: six processes, about 1.6 s of CPU per answer on a
	// Debian host with many packages, which every node paid twice as it
	// joined.
	engine, version := e.engine, e.version
	if version == "" {
		ver, err := e.cli.ServerVersion(ctx)
		if err != nil {
			return Info{}, classify(op, err)
		}
		engine, version = "docker", ver.Version
		if isPodman(ver.Components) {
			engine = "podman"
		}
	}
	sys, err := e.cli.Info(ctx)
	if err != nil {
		return Info{}, classify(op, err)
	}
	info := Info{
		Engine:        engine,
		Version:       version,
		APIVersion:    e.cli.ClientVersion(),
		Runtime:       sys.DefaultRuntime,
		StorageDriver: sys.Driver,
		StorageRoot:   sys.DockerRootDir,
		FreeBytes:     freeBytes(sys.DockerRootDir),
	}
	if reg := sys.RegistryConfig; reg != nil {
		for _, cidr := range reg.InsecureRegistryCIDRs {
			info.InsecureRegistries = append(info.InsecureRegistries, cidr.String())
		}
		for name, idx := range reg.IndexConfigs {
			if idx != nil && !idx.Secure {
				info.InsecureRegistries = append(info.InsecureRegistries, name)
			}
		}
	}
	info.GPUs, err = hostGPUs(cdiSpecDirs, "/dev")
	if err != nil {
		return info, fmt.Errorf("%s: %w", op, err)
	}
	e.mu.Lock()
	e.lastInfo = &info
	e.mu.Unlock()
	return info, nil
}

// isPodman reports whether the version's components name podman (its
// service answers as "Podman Engine"; Docker's as "Engine").
func isPodman(components []types.ComponentVersion) bool {
	for _, c := range components {
		if strings.Contains(strings.ToLower(c.Name), "podman") {
			return true
		}
	}
	return false
}
