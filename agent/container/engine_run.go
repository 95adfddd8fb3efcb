package container

import (
	"context"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	units "github.com/docker/go-units"
)

// Run creates and starts the container, then follows its log from the
// beginning to spec.Stdout and spec.Stderr (the engine keeps the log, so
// nothing printed before the follow begins is lost; attaching before the
// start, as `docker run` does, is refused by podman 4's service). A
// container that fails to start is removed.
func (e *Engine) Run(ctx context.Context, spec Spec) (string, error) {
	op := "run " + spec.Image
	if err := e.validate(spec); err != nil {
		return "", err
	}
	cfg, hostCfg := e.configs(spec)
	created, err := e.cli.ContainerCreate(ctx, cfg, hostCfg, nil, nil, spec.Name)
	if err != nil {
		return "", classify(op, err)
	}
	id := created.ID
	if err := e.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		// A background context: the caller's may be what ended.
		_ = e.cli.ContainerRemove(context.Background(), id, container.RemoveOptions{Force: true, RemoveVolumes: true})
		return "", classify(op, err)
	}
	followCtx, cancel := context.WithCancel(context.Background())
	c := &logCopy{done: make(chan struct{}), cancel: cancel, stdout: orDiscard(spec.Stdout), stderr: orDiscard(spec.Stderr), followEnding: e.followEnding}
	e.mu.Lock()
	e.copying[id] = c
	e.mu.Unlock()
	// Not the caller's context: the copy lasts as long as the container,
	// and ends with its log.
	go c.follow(followCtx, e, id)
	return id, nil
}

// orDiscard is w, or io.Discard when nil.
func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// configs translates spec into the engine's container and host
// configuration.
func (e *Engine) configs(spec Spec) (*container.Config, *container.HostConfig) {
	env := make([]string, 0, len(spec.Env))
	for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
		env = append(env, k+"="+spec.Env[k])
	}
	cfg := &container.Config{
		Image:      spec.Image,
		Entrypoint: spec.Entrypoint,
		Cmd:        spec.Command,
		Env:        env,
		WorkingDir: spec.WorkingDir,
		User:       spec.User,
		Labels:     spec.Labels,
	}
	host := &container.HostConfig{
		NetworkMode: container.NetworkMode(e.networkMode(spec.Network)),
		UsernsMode:  container.UsernsMode(spec.Userns),
		Resources: container.Resources{
			NanoCPUs: spec.NanoCPUs,
			Memory:   spec.MemoryBytes,
			Ulimits:  toUlimits(e.defaultUlimits(spec.Ulimits)),
		},
	}
	if spec.MemoryBytes > 0 {
		host.Resources.MemorySwap = spec.MemoryBytes // no swap beyond the limit
	}
	for _, m := range spec.Mounts {
		if m.Chown {
			// Only the bind string form carries podman's U option.
			opt := "U"
			if m.ReadOnly {
				opt = "ro,U"
			}
			host.Binds = append(host.Binds, m.Source+":"+m.Target+":"+opt)
			continue
		}
		host.Mounts = append(host.Mounts, mount.Mount{Type: mount.TypeBind, Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly})
	}
	for _, d := range spec.Devices {
		if d.CDI && !e.podman {
			// Docker (API 1.44+) takes CDI names as a device request;
			// podman takes them where device nodes go.
			host.Resources.DeviceRequests = append(host.Resources.DeviceRequests,
				container.DeviceRequest{Driver: "cdi", DeviceIDs: []string{d.Path}})
			continue
		}
		host.Resources.Devices = append(host.Resources.Devices,
			container.DeviceMapping{PathOnHost: d.Path, PathInContainer: d.Path, CgroupPermissions: "rwm"})
	}
	return cfg, host
}

// defaultUlimits is given, with nofile and nproc at the host's hard
// limit where not given.
func (e *Engine) defaultUlimits(given []Ulimit) []Ulimit {
	out := slices.Clone(given)
	for _, name := range []string{"nofile", "nproc"} {
		max, ok := e.hostLimits[name]
		if !ok || max < 0 || slices.ContainsFunc(given, func(u Ulimit) bool { return u.Name == name }) {
			continue
		}
		out = append(out, Ulimit{Name: name, Soft: max, Hard: max})
	}
	return out
}

// toUlimits is the engine's form of ulimits.
func toUlimits(us []Ulimit) []*units.Ulimit {
	out := make([]*units.Ulimit, 0, len(us))
	for _, u := range us {
		out = append(out, &units.Ulimit{Name: u.Name, Soft: u.Soft, Hard: u.Hard})
	}
	return out
}

// Wait waits for the container to stop and its output to be copied.
func (e *Engine) Wait(ctx context.Context, id string) (int, error) {
	op := "wait " + id
	resc, errc := e.cli.ContainerWait(ctx, id, container.WaitConditionNotRunning)
	var code int
	select {
	case res := <-resc:
		if res.Error != nil && res.Error.Message != "" {
			return -1, errorf(errOther, op, "%s", res.Error.Message)
		}
		code = int(res.StatusCode)
	case err := <-errc:
		return -1, classify(op, err)
	}
	e.mu.Lock()
	c := e.copying[id]
	grace := e.logFollowGrace
	e.mu.Unlock()
	if c != nil {
		if err := c.wait(ctx, e, id, grace); err != nil {
			return -1, classify(op, err)
		}
		e.forget(id)
	}
	return code, nil
}

// forget drops a container's output copy from the table.
func (e *Engine) forget(id string) {
	e.mu.Lock()
	delete(e.copying, id)
	e.mu.Unlock()
}

// Stop stops the container: SIGTERM, SIGKILL after grace (whole
// seconds, rounded up, as the API counts them).
func (e *Engine) Stop(ctx context.Context, id string, grace time.Duration) error {
	secs := int((grace + time.Second - 1) / time.Second)
	err := e.cli.ContainerStop(ctx, id, container.StopOptions{Signal: "SIGTERM", Timeout: &secs})
	return classify("stop "+id, err)
}

// Remove removes the container, killing it first, and its anonymous
// volumes; a container already gone is no error.
func (e *Engine) Remove(ctx context.Context, id string) error {
	err := classify("remove "+id, e.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true}))
	e.mu.Lock()
	if c := e.copying[id]; c != nil {
		c.cancel()
	}
	e.mu.Unlock()
	e.forget(id)
	if isKind(err, ErrNotFound) {
		return nil
	}
	return err
}

// List lists containers carrying every label given.
func (e *Engine) List(ctx context.Context, labels map[string]string) ([]Summary, error) {
	args := filters.NewArgs()
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		args.Add("label", k+"="+labels[k])
	}
	list, err := e.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: args})
	if err != nil {
		return nil, classify("list containers", err)
	}
	out := make([]Summary, 0, len(list))
	for _, c := range list {
		s := Summary{ID: c.ID, Image: c.Image, Labels: c.Labels, State: string(c.State), Created: time.Unix(c.Created, 0)}
		if len(c.Names) > 0 {
			s.Name = trimSlash(c.Names[0])
		}
		out = append(out, s)
	}
	return out, nil
}

// trimSlash drops the leading "/" Docker puts on names.
func trimSlash(s string) string {
	if len(s) > 0 && s[0] == '/' {
		return s[1:]
	}
	return s
}

// limitString prints a limit, "unlimited" for -1.
func limitString(v int64) string {
	if v < 0 {
		return "unlimited"
	}
	return strconv.FormatInt(v, 10)
}
