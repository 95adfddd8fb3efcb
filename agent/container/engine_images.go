package container

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/distribution/reference"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/registry"
)

// Inspect describes a local image; ErrNotFound when absent.
func (e *Engine) Inspect(ctx context.Context, ref string) (Image, error) {
	op := "inspect image " + ref
	resp, err := e.cli.ImageInspect(ctx, ref)
	if err != nil {
		return Image{}, classify(op, err)
	}
	created, _ := time.Parse(time.RFC3339Nano, resp.Created)
	return Image{ID: resp.ID, Refs: resp.RepoTags, Size: resp.Size, Created: created}, nil
}

// Pull pulls ref, reporting progress summed over the layers.
func (e *Engine) Pull(ctx context.Context, ref string, opts PullOptions) (Image, error) {
	op := "pull " + ref
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return Image{}, errorf(ErrInvalid, op, "image reference %q: %v", ref, err)
	}
	named = reference.TagNameOnly(named)
	if opts.Insecure {
		if err := e.checkInsecure(ctx, reference.Domain(named)); err != nil {
			return Image{}, &Error{Kind: ErrInvalid, Op: op, Msg: err.Error()}
		}
	}
	var po image.PullOptions
	if opts.Auth != nil {
		po.RegistryAuth, err = registry.EncodeAuthConfig(registry.AuthConfig{
			Username: opts.Auth.Username, Password: opts.Auth.Password, ServerAddress: reference.Domain(named),
		})
		if err != nil {
			return Image{}, errorf(ErrInvalid, op, "encode credentials: %v", err)
		}
	}
	body, err := e.cli.ImagePull(ctx, named.String(), po)
	if err != nil {
		return Image{}, classifyPull(op, err)
	}
	defer body.Close()
	if err := readStream(body, progressSink(opts.Progress), nil); err != nil {
		return Image{}, classifyPull(op, err)
	}
	return e.Inspect(ctx, named.String())
}

// checkInsecure refuses an insecure pull from a registry the engine
// does not reach over HTTP: the engine would try HTTPS and fail with a
// TLS error that says nothing of the cause.
func (e *Engine) checkInsecure(ctx context.Context, domain string) error {
	e.mu.Lock()
	last := e.lastInfo
	e.mu.Unlock()
	if last != nil && last.Insecure(domain) {
		return nil // a registry listed stays listed until the engine restarts
	}
	info, err := e.Info(ctx)
	if err != nil {
		return err
	}
	if info.Insecure(domain) {
		return nil
	}
	return fmt.Errorf("registry %s is marked insecure but the %s engine does not list it among its insecure registries %v "+
		"(Docker: insecure-registries in daemon.json; podman: insecure = true in registries.conf)", domain, info.Engine, info.InsecureRegistries)
}

// Insecure reports whether the engine reaches registry (host or
// host:port) over plain HTTP: it is listed by name, or its address is in
// a listed CIDR (Docker lists 127.0.0.0/8 by default).
func (i Info) Insecure(registry string) bool {
	domain, insecure := registry, i.InsecureRegistries
	if slices.Contains(insecure, domain) {
		return true
	}
	host := domain
	if h, _, err := net.SplitHostPort(domain); err == nil {
		host = h
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	for _, entry := range insecure {
		if p, err := netip.ParsePrefix(entry); err == nil && p.Contains(addr) {
			return true
		}
	}
	return false
}

// Build builds opts.ContextDir's Dockerfile and tags the image.
func (e *Engine) Build(ctx context.Context, opts BuildOptions) (Image, error) {
	op := "build " + opts.Tag
	if opts.Dockerfile == "" {
		opts.Dockerfile = "Dockerfile"
	}
	if _, err := reference.ParseNormalizedNamed(opts.Tag); err != nil {
		return Image{}, errorf(ErrInvalid, op, "tag %q: %v", opts.Tag, err)
	}
	if st, err := os.Stat(opts.ContextDir); err != nil || !st.IsDir() {
		return Image{}, errorf(ErrInvalid, op, "context directory %q does not exist", opts.ContextDir)
	}
	df := filepath.Clean(opts.Dockerfile)
	if filepath.IsAbs(df) || df == ".." || strings.HasPrefix(df, "../") {
		return Image{}, errorf(ErrInvalid, op, "dockerfile path %q must be relative to the context and inside it", opts.Dockerfile)
	}
	if st, err := os.Stat(filepath.Join(opts.ContextDir, df)); err != nil || st.IsDir() {
		return Image{}, errorf(ErrInvalid, op, "dockerfile path %q: no such file in the context", opts.Dockerfile)
	}
	ctxTar, errc := tarDir(opts.ContextDir)
	defer ctxTar.Close()
	resp, err := e.cli.ImageBuild(ctx, ctxTar, build.ImageBuildOptions{
		Tags:        []string{opts.Tag},
		Dockerfile:  filepath.ToSlash(df),
		Labels:      opts.Labels,
		Remove:      true,
		ForceRemove: true,
		// No ulimits here: podman 4's service refuses the parameter (400);
		// StartPodman's containers.conf bounds its build steps instead.
	})
	if err != nil {
		return Image{}, classify(op, err)
	}
	defer resp.Body.Close()
	if err := readStream(resp.Body, nil, opts.Log); err != nil {
		if kind := kindOfText(err.Error()); kind == ErrNoSpace {
			return Image{}, errorf(ErrNoSpace, op, "%v", err)
		}
		return Image{}, errorf(ErrInvalid, op, "%v", err)
	}
	if err := <-errc; err != nil {
		return Image{}, errorf(ErrInvalid, op, "read the context: %v", err)
	}
	return e.Inspect(ctx, opts.Tag)
}

// Images lists the local images, each with the newest creation time of
// the containers using it.
func (e *Engine) Images(ctx context.Context) ([]Image, error) {
	const op = "list images"
	list, err := e.cli.ImageList(ctx, image.ListOptions{All: false})
	if err != nil {
		return nil, classify(op, err)
	}
	ctrs, err := e.cli.ContainerList(ctx, container.ListOptions{All: true})
	if err != nil {
		return nil, classify(op, err)
	}
	out := make([]Image, 0, len(list))
	for _, s := range list {
		img := Image{ID: s.ID, Refs: s.RepoTags, Size: s.Size, Created: time.Unix(s.Created, 0)}
		for _, c := range ctrs {
			if c.ImageID == s.ID || sameID(c.ImageID, s.ID) {
				img.Containers++
				if t := time.Unix(c.Created, 0); t.After(img.LastUsed) {
					img.LastUsed = t
				}
			}
		}
		out = append(out, img)
	}
	return out, nil
}

// sameID compares image ids with or without their "sha256:" prefix
// (podman's containers name the bare hex).
func sameID(a, b string) bool {
	return a != "" && strings.TrimPrefix(a, "sha256:") == strings.TrimPrefix(b, "sha256:")
}

// RemoveImage removes an image and all its tags; ErrInUse while a
// container uses it. The check is made here, by image id, because the
// engine's own refusal cannot be relied on: removing all the tags needs
// force, and podman's force removes the containers using the image too.
func (e *Engine) RemoveImage(ctx context.Context, id string) error {
	op := "remove image " + id
	img, err := e.cli.ImageInspect(ctx, id)
	if err != nil {
		return classify(op, err)
	}
	ctrs, err := e.cli.ContainerList(ctx, container.ListOptions{All: true})
	if err != nil {
		return classify(op, err)
	}
	for _, c := range ctrs {
		if sameID(c.ImageID, img.ID) {
			return errorf(ErrInUse, op, "used by container %s", c.ID)
		}
	}
	_, err = e.cli.ImageRemove(ctx, img.ID, image.RemoveOptions{Force: true, PruneChildren: true})
	return classify(op, err)
}

// streamMessage is one line of a pull's or build's JSON stream.
type streamMessage struct {
	ID             string `json:"id"`
	Status         string `json:"status"`
	Stream         string `json:"stream"`
	Error          string `json:"error"`
	ProgressDetail struct {
		Current int64 `json:"current"`
		Total   int64 `json:"total"`
	} `json:"progressDetail"`
	ErrorDetail *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
}

// readStream reads a JSON message stream to its end: each message to
// onMsg, build output to onLine; the stream's error message ends it.
func readStream(r io.Reader, onMsg func(streamMessage), onLine func(string)) error {
	dec := json.NewDecoder(r)
	var partial string
	for {
		var m streamMessage
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				if partial != "" && onLine != nil {
					onLine(partial)
				}
				return nil
			}
			return fmt.Errorf("read the engine's stream: %w", err)
		}
		if m.Error != "" || m.ErrorDetail != nil {
			msg := m.Error
			if msg == "" {
				msg = m.ErrorDetail.Message
			}
			return errors.New(strings.TrimSpace(msg))
		}
		if onMsg != nil {
			onMsg(m)
		}
		if onLine != nil && m.Stream != "" {
			partial += m.Stream
			for {
				i := strings.IndexByte(partial, '\n')
				if i < 0 {
					break
				}
				onLine(partial[:i])
				partial = partial[i+1:]
			}
		}
	}
}

// progressSink sums the per-layer progress of a pull into one Progress.
func progressSink(report func(Progress)) func(streamMessage) {
	if report == nil {
		return nil
	}
	type layer struct{ done, total int64 }
	layers := map[string]*layer{}
	var order []string
	return func(m streamMessage) {
		if m.ID != "" {
			l := layers[m.ID]
			if l == nil {
				l = &layer{}
				layers[m.ID] = l
				order = append(order, m.ID)
			}
			if m.ProgressDetail.Total > 0 {
				l.total = m.ProgressDetail.Total
			}
			if m.ProgressDetail.Current > 0 {
				l.done = m.ProgressDetail.Current
			}
			if strings.HasPrefix(m.Status, "Download complete") || strings.HasPrefix(m.Status, "Pull complete") ||
				strings.HasPrefix(m.Status, "Already exists") {
				l.done = l.total
			}
		}
		var p Progress
		for _, id := range order {
			p.Done += layers[id].done
			p.Total += layers[id].total
		}
		p.Status = m.Status
		report(p)
	}
}

// Pusher is a Runtime that can push an image to a registry (Engine
// does): a node that built an image pushes it to the workspace's
// registry so that other nodes pull it rather than build it again.
type Pusher interface {
	// Push pushes the local image ref (a reference naming its registry).
	// ErrNotFound when the image is not local; ErrUnauthorized,
	// ErrNoSpace with the registry's words.
	Push(ctx context.Context, ref string, opts PullOptions) error
}

var _ Pusher = (*Engine)(nil)

// Push pushes ref with opts' credentials (opts.Progress is not called).
func (e *Engine) Push(ctx context.Context, ref string, opts PullOptions) error {
	op := "push " + ref
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return errorf(ErrInvalid, op, "image reference %q: %v", ref, err)
	}
	named = reference.TagNameOnly(named)
	if opts.Insecure {
		if err := e.checkInsecure(ctx, reference.Domain(named)); err != nil {
			return &Error{Kind: ErrInvalid, Op: op, Msg: err.Error()}
		}
	}
	// The API wants an auth header even for an anonymous push.
	auth := registry.AuthConfig{ServerAddress: reference.Domain(named)}
	if opts.Auth != nil {
		auth.Username, auth.Password = opts.Auth.Username, opts.Auth.Password
	}
	encoded, err := registry.EncodeAuthConfig(auth)
	if err != nil {
		return errorf(ErrInvalid, op, "encode credentials: %v", err)
	}
	body, err := e.cli.ImagePush(ctx, named.String(), image.PushOptions{RegistryAuth: encoded})
	if err != nil {
		return classify(op, err)
	}
	defer body.Close()
	if err := readStream(body, nil, nil); err != nil {
		return classify(op, err)
	}
	return nil
}
