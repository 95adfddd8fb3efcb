package ctrhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/distribution/reference"
	"golang.org/x/sys/unix"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/archive"
)

// ImageJob is what preparing one rank's image needs.
type ImageJob struct {
	Env   *asset.EnvironmentSpec
	Task  *node.ContainerTask // may be nil (an older server)
	Fetch func(ctx context.Context, id string, w io.Writer, dst string) error
	// progress reports a phase ("pulling …", "building …"); the caller
	// rate-limits it.
	Progress func(reason string)
	// log gets the build's output (the rank's log).
	Log func(line string)
	// tmp is a folder for build contexts, removed by the caller.
	Tmp string
}

// ErrNoConda is an image without conda or mamba given a conda file.
var ErrNoConda = errors.New("no conda")

// PrepareImage makes the rank's image local: pulled, built from its
// uploaded context, or derived with its conda file; it returns the
// reference to run.
func (h *Host) PrepareImage(ctx context.Context, j ImageJob) (string, error) {
	if j.Task != nil {
		// Before the service starts (which then lists them) or before
		// its pulls, builds and pushes reach them.
		if err := h.EnsureInsecure(ctx, j.Task.Registries); err != nil {
			return "", err
		}
	}
	rt, cache, err := h.Runtime(ctx)
	if err != nil {
		return "", err
	}
	var ref string
	switch {
	case j.Env.Build != nil:
		ref, err = h.build(ctx, rt, j)
	default:
		ref, err = h.Pull(ctx, rt, j, j.Env.Image)
		if err == nil && j.Env.CondaFile != "" {
			ref, err = h.condaImage(ctx, rt, j, ref)
		}
	}
	if err != nil {
		return "", err
	}
	if img, err := rt.Inspect(ctx, ref); err == nil {
		cache.Used(img.ID)
		h.recordUse(img.ID)
	}
	return ref, nil
}

// Pull pulls ref unless the node's store has it (a tag pulled before is
// used as it is: tags that move are re-pulled when a job names a
// digest). The nodes sharing the store pull it once: the others wait for
// that pull and find the image.
func (h *Host) Pull(ctx context.Context, rt container.Runtime, j ImageJob, ref string) (string, error) {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", &container.Error{Kind: container.ErrInvalid, Op: "pull " + ref, Msg: err.Error()}
	}
	defer h.building.lock("pull " + ref)()
	unlock, err := h.hostLock(ctx, "pull "+ref)
	if err != nil {
		return "", err
	}
	defer unlock()
	// An image pulled with a login is asked of its registry again, with
	// this job's login: the store is shared by the nodes of every
	// workspace on the host, and a local copy alone would hand a private
	// image to a job that may not pull it.
	// A local name (localhost/…: imported or built on the host by its
	// administrator or by Shoal) has no registry to ask: its copy serves,
	// whatever else names the same image.
	if img, err := rt.Inspect(ctx, ref); err == nil && (!h.pulledWithLogin(img.ID) || reference.Domain(named) == "localhost" ||
		h.servedWithout(named.Name(), img.ID)) {
		return ref, nil
	}
	opts := RegistryOptions(j.Task, reference.Domain(named))
	opts.Progress = func(p container.Progress) {
		if p.Total > 0 {
			j.Progress(fmt.Sprintf("pulling %s — %d of %d MB", ref, p.Done>>20, p.Total>>20))
		}
	}
	j.Progress("pulling " + ref)
	img, err := rt.Pull(ctx, ref, opts)
	if err != nil {
		return "", err
	}
	h.ImagesChanged()
	if opts.Auth == nil {
		// Best effort: without the record the next job asks the
		// registry again, which only costs a manifest request.
		_ = h.markServedWithout(named.Name(), img.ID)
	}
	if opts.Auth != nil {
		if err := h.markPulledWithLogin(img.ID); err != nil {
			// Unmarked, the next job without the login would run it: this
			// one does not either.
			return "", fmt.Errorf("recording that %s needs its registry's login: %w", ref, err)
		}
	}
	return ref, nil
}

// RegistryOptions are the task's login for registry domain, if any.
func RegistryOptions(task *node.ContainerTask, domain string) container.PullOptions {
	var opts container.PullOptions
	if task == nil {
		return opts
	}
	for _, c := range task.Registries {
		if c.Registry == domain {
			if c.Username != "" || c.Password != "" {
				opts.Auth = &container.Credentials{Username: c.Username, Password: c.Password}
			}
			opts.Insecure = c.Insecure
		}
	}
	return opts
}

// build builds the uploaded context, tagged by its content's hash: the
// same context on this node is built once.
func (h *Host) build(ctx context.Context, rt container.Runtime, j ImageJob) (string, error) {
	b := j.Env.Build
	dir := filepath.Join(j.Tmp, "context")
	sum := sha256.New()
	if err := j.Fetch(ctx, b.Path, sum, dir); err != nil {
		return "", fmt.Errorf("build context: %w", err)
	}
	dockerfile := b.DockerfilePath
	if dockerfile == "" {
		dockerfile = asset.DefaultDockerfilePath
	}
	io.WriteString(sum, "\x00"+dockerfile)
	tag := "shoal-build/" + hex.EncodeToString(sum.Sum(nil))[:32]
	// Its base images through this job's logins first, also when the
	// image was built before: the store is shared by every workspace's
	// nodes on the host, and neither the build nor its image may stand
	// on a private image this job could not pull.
	if err := h.pullBases(ctx, rt, j, filepath.Join(dir, dockerfile)); err != nil {
		return "", err
	}
	pushTo := ""
	if j.Task != nil {
		pushTo = strings.TrimRight(j.Task.PushTo, "/")
	}
	if pushTo == "" {
		return h.buildOnce(ctx, rt, j, tag, container.BuildOptions{ContextDir: dir, Dockerfile: dockerfile})
	}
	// With a workspace registry the image is named there: a node that
	// finds it there pulls it; the one that builds it pushes it.
	tag = pushTo + "/" + tag
	named, err := reference.ParseNormalizedNamed(tag)
	if err != nil {
		return "", &container.Error{Kind: container.ErrInvalid, Op: "build", Msg: fmt.Sprintf("push_to %q: %v", pushTo, err)}
	}
	opts := RegistryOptions(j.Task, reference.Domain(named))
	unlock := h.building.lock("build " + tag)
	unlockHost, err := h.hostLock(ctx, "build "+tag)
	if err != nil {
		unlock()
		return "", err
	}
	if _, err := rt.Inspect(ctx, tag); err == nil {
		unlockHost()
		unlock()
		j.Log(builtBefore(tag))
		return tag, nil
	}
	j.Progress("pulling " + tag)
	_, pullErr := rt.Pull(ctx, tag, opts)
	unlockHost()
	unlock()
	if pullErr == nil {
		h.ImagesChanged()
		j.Log("shoal agent: the image " + tag + " was built from this context before, on another node: pulled from the workspace's registry, not built")
		return tag, nil
	}
	ref, err := h.buildOnce(ctx, rt, j, tag, container.BuildOptions{ContextDir: dir, Dockerfile: dockerfile})
	if err != nil {
		return "", err
	}
	if p, ok := rt.(container.Pusher); ok {
		j.Progress("pushing " + tag)
		if err := p.Push(ctx, tag, opts); err != nil {
			// The job runs on this node's image all the same; other nodes
			// will build it again.
			j.Log("shoal agent: pushing the built image failed: " + err.Error())
		}
	}
	return ref, nil
}

// buildOnce builds opts as tag unless the node's store has tag already
// (another node of the host may have built it).
func (h *Host) buildOnce(ctx context.Context, rt container.Runtime, j ImageJob, tag string, opts container.BuildOptions) (string, error) {
	defer h.building.lock("build " + tag)()
	unlock, err := h.hostLock(ctx, "build "+tag)
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := rt.Inspect(ctx, tag); err == nil {
		j.Log(builtBefore(tag))
		return tag, nil
	}
	j.Progress("building " + tag)
	opts.Tag = tag
	opts.Labels = map[string]string{"shoal.build": "1"}
	opts.Log = j.Log
	if _, err := rt.Build(ctx, opts); err != nil {
		return "", err
	}
	h.ImagesChanged()
	return tag, nil
}

// builtBefore is the rank's log line for a build context this node built
// before: a user who sees no build output learns why.
func builtBefore(tag string) string {
	return "shoal agent: the image " + tag + " was built from this context before: used as it is, not built again"
}

// condaSetup is the derived image's Dockerfile: the base's own mamba or
// conda updates its base environment with the job's file.
const condaSetup = `FROM %s
COPY conda.yml /tmp/shoal-conda.yml
RUN set -e; if command -v mamba >/dev/null 2>&1; then mamba env update -n base -f /tmp/shoal-conda.yml; \
    elif command -v micromamba >/dev/null 2>&1; then micromamba install -y -n base -f /tmp/shoal-conda.yml; \
    else conda env update -n base -f /tmp/shoal-conda.yml; fi; \
    (conda clean -afy || mamba clean -afy || true) >/dev/null 2>&1; rm -f /tmp/shoal-conda.yml
`

// condaImage derives an image from base with the task's conda file,
// tagged by the hash of both; an image without conda or mamba is refused
// with that reason.
func (h *Host) condaImage(ctx context.Context, rt container.Runtime, j ImageJob, base string) (string, error) {
	img, err := rt.Inspect(ctx, base)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(img.ID + "\x00" + j.Env.CondaFile))
	tag := "shoal-conda/" + hex.EncodeToString(sum[:])[:32]
	if _, err := rt.Inspect(ctx, tag); err == nil {
		return tag, nil
	}
	if err := h.probeConda(ctx, rt, base); err != nil {
		return "", err
	}
	dir := filepath.Join(j.Tmp, "conda")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "conda.yml"), []byte(j.Env.CondaFile), 0o600); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(fmt.Sprintf(condaSetup, img.ID)), 0o600); err != nil {
		return "", err
	}
	return h.buildOnce(ctx, rt, j, tag, container.BuildOptions{ContextDir: dir})
}

// probeConda runs the image once to see whether it has mamba,
// micromamba or conda.
func (h *Host) probeConda(ctx context.Context, rt container.Runtime, image string) error {
	id, err := rt.Run(ctx, container.Spec{Image: image, Entrypoint: []string{"/bin/sh", "-c",
		"command -v mamba || command -v micromamba || command -v conda"}, Network: "none",
		Labels: h.NodeLabels(h.nodeID)})
	if err != nil {
		return err
	}
	defer rt.Remove(context.WithoutCancel(ctx), id)
	code, err := rt.Wait(ctx, id)
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("%w: the image %s has neither conda nor mamba, which a conda_file needs: "+
			"name an image that has one (a Miniconda or Mambaforge base) or install the packages in a build: context", ErrNoConda, image)
	}
	return nil
}

// ImageFailure says how a failed image preparation ends the rank: the
// registry's or the build's refusal, or a registry that cannot be
// reached, fails the job (RankImageFailed, its words kept); an engine
// that broke is the node's failure.
func ImageFailure(err error) (state string, failure job.RankFailure) {
	// ErrRuntimeMissing too: an engine that cannot start here fails the
	// job with its words; as node loss it was requeued onto the same
	// engine twenty times.
	// ErrUnreachable: a registry the node cannot reach (no route, a name
	// that does not resolve, the connection refused) is where the job
	// says its image is; another attempt, on this node or another, meets
	// the same, and as node loss it was requeued twenty times in seconds.
	for _, kind := range []error{container.ErrNotFound, container.ErrUnauthorized, container.ErrUnreachable, container.ErrNoSpace,
		container.ErrInvalid, container.ErrRuntimeMissing, ErrNoConda} {
		if errors.Is(err, kind) {
			return node.RankFailed, node.RankImageFailed
		}
	}
	if errors.Is(err, archive.ErrUnsafe) || errors.Is(err, archive.ErrLimit) {
		return node.RankFailed, node.RankImageFailed
	}
	switch core.ErrorCode(err) {
	case core.ENOTFOUND, core.EINVALID, core.EFORBIDDEN:
		return node.RankFailed, node.RankImageFailed
	}
	return node.RankLost, node.RankPrepareFailed
}

// ProgressReporter sends Preparing reports: on a phase change at once,
// within a phase at most every interval. The server may not record them
// (progress only): a refusal is logged, never retried.
type ProgressReporter struct {
	Send     func(reason string)
	Interval time.Duration
	Now      func() time.Time

	mu     sync.Mutex
	phase  string
	last   time.Time
	reason string
}

// Report sends reason when its phase (the words before " — ") changed or
// the interval passed since the last report.
func (p *ProgressReporter) Report(reason string) {
	phase, _, _ := strings.Cut(reason, " — ")
	p.mu.Lock()
	now := p.Now()
	if reason == p.reason || (phase == p.phase && now.Sub(p.last) < p.Interval) {
		p.mu.Unlock()
		return
	}
	p.phase, p.last, p.reason = phase, now, reason
	p.mu.Unlock()
	p.Send(reason)
}

// DirFree is the free space under dir, -1 when unknown.
func DirFree(dir string) int64 {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return -1
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// maxDockerfile bounds what pullBases reads of a Dockerfile.
const maxDockerfile = 1 << 20

// pullBases pulls the images the Dockerfile at path builds on (see
// BaseImages) as Pull does: a local copy serves unless it was pulled
// with a login, which this job must then have too.
func (h *Host) pullBases(ctx context.Context, rt container.Runtime, j ImageJob, path string) error {
	// The agent reads it as root: a link out of the build context (to a
	// file of the host's) is refused, never read.
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil // the build says what is wrong with its Dockerfile
	}
	ctxDir, err := filepath.EvalSymlinks(j.Tmp)
	if err != nil || !strings.HasPrefix(real, ctxDir+string(filepath.Separator)) {
		return &container.Error{Kind: container.ErrInvalid, Op: "build",
			Msg: "build.dockerfile_path: the Dockerfile is a link out of the build context"}
	}
	f, err := os.Open(real)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxDockerfile))
	if err != nil {
		return nil
	}
	for _, ref := range BaseImages(b) {
		if _, err := h.Pull(ctx, rt, j, ref); err != nil {
			return err
		}
	}
	return nil
}
