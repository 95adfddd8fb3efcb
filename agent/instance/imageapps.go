package instance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/netns"
)

// labelApp names the custom application a container runs (with
// ctrhost.LabelNode, its instance's node).
const labelApp = "shoal.app"

// Bounds of an image application's supervision.
const (
	// appReadyTimeout bounds the readiness check of one start: an
	// application that does not answer by then is reported with why,
	// and keeps running (a large image's first start can be slow).
	appReadyTimeout = 5 * time.Minute
	// appRestartMin and appRestartMax bound the wait before a restart,
	// doubling from the first while the application keeps exiting early.
	appRestartMin = time.Second
	appRestartMax = 30 * time.Second
	// appStopGrace is how long an application has to exit on SIGTERM.
	appStopGrace = 10 * time.Second
	// appPullTimeout bounds one pull of an application's image.
	appPullTimeout = 30 * time.Minute
)

// imageApps are an instance's custom applications that run from images,
// each in a container of its own, restarted when it exits and removed
// when the instance stops.
type imageApps struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	apps   []*imageApp
}

// imageApp is one application and what its supervisor last saw.
type imageApp struct {
	rt      *Runtime
	spec    *compute.CustomApplication
	task    *node.InstanceTask
	logPath string
	log     *slog.Logger
	// box is the instance's container when it is one: on a subnet, the
	// application shares its network namespace (else the host's).
	box *instanceBox
	// own says the application has a network namespace of its own
	// (container.NetworkOwn): beside an instance of host processes that
	// has one (hostNet), whose listeners are off the host's loopback,
	// its are too. The container engine joins no namespace the agent
	// holds, so it is not the instance's.
	own bool

	mu       sync.Mutex
	id       string
	pid      int
	running  bool
	ready    bool
	err      string
	restarts int
}

// startImageApps starts the task's applications that have an image; nil
// when there are none. box is the instance's container, nil when it runs
// as host processes.
func (rt *Runtime) startImageApps(t *node.InstanceTask, logDir string, box *instanceBox) *imageApps {
	var ias imageApps
	ctx, cancel := context.WithCancel(context.Background())
	ias.cancel = cancel
	for _, spec := range t.Apps {
		if spec.Image == nil {
			continue
		}
		a := &imageApp{rt: rt, spec: spec, task: t, logPath: filepath.Join(logDir, spec.Name+".log"),
			log: rt.n.Log.With("component", "apps", "app", spec.Name), box: box, own: box == nil && rt.hostNet() != nil}
		ias.apps = append(ias.apps, a)
		ias.wg.Add(1)
		go func() { defer ias.wg.Done(); a.supervise(ctx) }()
	}
	if len(ias.apps) == 0 {
		cancel()
		return nil
	}
	return &ias
}

// stop stops every application and waits until its container is removed.
func (ias *imageApps) stop() {
	if ias == nil {
		return
	}
	ias.cancel()
	ias.wg.Wait()
}

// reports are the applications' states for the instance's report.
func (ias *imageApps) reports() []compute.InstanceAppReport {
	if ias == nil {
		return nil
	}
	var out []compute.InstanceAppReport
	for _, a := range ias.apps {
		a.mu.Lock()
		r := compute.InstanceAppReport{Name: a.spec.Name, Running: a.running, Ready: a.ready, Error: a.err}
		if a.running {
			r.Addr = "127.0.0.1:" + strconv.Itoa(a.spec.Endpoints[0].Target)
			r.ContainerID, r.ContainerPID = a.id, a.pid
			if a.onSubnet() || a.own {
				// It shares the instance's namespace, or has one of its
				// own: its own first process's, which passes the proxy's
				// container test.
				r.NetNSPID = a.pid
			}
		}
		a.mu.Unlock()
		out = append(out, r)
	}
	return out
}

// supervise runs the application until ctx ends, starting it again when
// it exits: after appRestartMin, doubling up to appRestartMax while it
// keeps exiting within a minute of its start.
func (a *imageApp) supervise(ctx context.Context) {
	wait := appRestartMin
	for {
		began := time.Now()
		err := a.once(ctx)
		if ctx.Err() != nil {
			a.mu.Lock()
			a.running, a.ready, a.id, a.pid = false, false, "", 0
			a.mu.Unlock()
			return
		}
		if time.Since(began) > time.Minute {
			wait = appRestartMin
		}
		a.mu.Lock()
		a.running, a.ready, a.id, a.pid = false, false, "", 0
		a.err = fmt.Sprintf("%v; starting it again in %s", err, wait)
		a.restarts++
		a.mu.Unlock()
		a.log.Warn("custom application stopped; starting it again", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, appRestartMax)
	}
}

// once pulls the image, checks the bind mounts, runs the container and
// waits for it to exit (an error saying how) or for ctx to end (then it
// stops it). The container is removed either way.
func (a *imageApp) once(ctx context.Context) error {
	h := a.rt.n.Ctr
	if h == nil {
		return errors.New("this host has no container runtime (the agent's containers are off)")
	}
	if err := h.EnsureInsecure(ctx, a.task.AppRegistries); err != nil {
		return fmt.Errorf("image %s: %w", a.spec.Image.Reference, err)
	}
	rt, _, err := h.Runtime(ctx)
	if err != nil {
		return fmt.Errorf("image %s: %w", a.spec.Image.Reference, err)
	}
	pctx, cancel := context.WithTimeout(ctx, appPullTimeout)
	ref, err := h.Pull(pctx, rt, ctrhost.ImageJob{Env: &asset.EnvironmentSpec{Image: a.spec.Image.Reference},
		Task: &node.ContainerTask{Registries: a.task.AppRegistries}, Progress: func(string) {}}, a.spec.Image.Reference)
	cancel()
	if err != nil {
		return err
	}
	mounts, err := a.rt.appMounts(a.spec, a.task.AppBindMountsAllowed)
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(a.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	network := "host"
	switch {
	case a.onSubnet():
		network = "container:" + a.box.id
	case a.own:
		network = container.NetworkOwn
	}
	spec := container.Spec{Image: ref, Env: map[string]string{"CI_NAME": a.task.Name, "CI_WORKSPACE": a.task.Workspace},
		// The instance's network: the host's, which its processes (and
		// its container when it runs in one) use too, or its container's
		// on a subnet.
		Mounts: mounts, Network: network, Stdout: logf, Stderr: logf,
		Labels: a.rt.n.Ctr.NodeLabels(a.rt.n.NodeID)}
	spec.Labels[labelApp] = a.spec.Name
	for k, v := range a.spec.EnvironmentVariables {
		spec.Env[k] = v
	}
	if a.spec.Command != "" {
		spec.Entrypoint, spec.Command = []string{"/bin/sh", "-c"}, []string{a.spec.Command}
	}
	if acct := a.rt.currentAccount(); acct.Switched() {
		// The application is the instance user's, not root's: what it
		// writes to the mounted home is theirs.
		spec.User = fmt.Sprintf("%d:%d", acct.UID, acct.GID)
	}
	id, err := rt.Run(ctx, spec)
	if err != nil {
		return err
	}
	// The container goes with this start, however it ends: a background
	// context, since ctx may be what ended. The engine gets a minute past
	// the grace: podman on a loaded host has taken over 20 s to remove a
	// stopped container, and one left behind outlives the instance.
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), appStopGrace+time.Minute)
		defer cancel()
		_ = rt.Stop(sctx, id, appStopGrace)
		if err := rt.Remove(sctx, id); err != nil {
			a.log.Warn("removing the application's container failed", "container", id, "err", err)
		}
	}()
	pid := 0
	if p, ok := rt.(container.PIDer); ok {
		pid, _ = p.ContainerPID(ctx, id)
	}
	a.mu.Lock()
	a.id, a.pid, a.running, a.ready, a.err = id, pid, true, false, ""
	a.mu.Unlock()
	a.log.Info("custom application started", "container", id, "pid", pid)
	rctx, stopReady := context.WithCancel(ctx)
	defer stopReady()
	go a.readiness(rctx)
	code, err := rt.Wait(ctx, id)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("its container exited with code %d", code)
}

// readiness asks the application's target port over HTTP until it
// answers (any status: it is up), or until appReadyTimeout, when it says
// so and stops asking.
func (a *imageApp) readiness(ctx context.Context) {
	url := "http://127.0.0.1:" + strconv.Itoa(a.spec.Endpoints[0].Target) + "/"
	client := &http.Client{Timeout: 2 * time.Second}
	if a.onSubnet() {
		client = a.box.httpClient(2 * time.Second)
	} else if a.own {
		a.mu.Lock()
		pid := a.pid
		a.mu.Unlock()
		client = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				return netns.Dial(ctx, pid, network, addr)
			}}}
	}
	deadline := time.Now().Add(appReadyTimeout)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			a.mu.Lock()
			a.ready = true
			a.mu.Unlock()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(300 * time.Millisecond):
		}
	}
	a.mu.Lock()
	a.err = fmt.Sprintf("it does not answer HTTP on port %d after %s", a.spec.Endpoints[0].Target, appReadyTimeout)
	a.mu.Unlock()
}

// onSubnet tells whether the application is in its instance container's
// network namespace (its own, or its subnet's), not the host's.
func (a *imageApp) onSubnet() bool { return a.box != nil && a.box.ownNet }
