package container

import (
	"context"
	"io"
	"time"
)

// Runtime is a node's container engine. Every method takes a context
// that bounds it; errors wrap one of this package's sentinel errors
// (ErrNotFound, ErrUnauthorized, ErrNoSpace, ErrInvalid,
// ErrRuntimeMissing) where one applies, read with errors.Is.
type Runtime interface {
	// Info describes the engine and the host it stores images on.
	// ErrRuntimeMissing when the engine does not answer.
	Info(ctx context.Context) (Info, error)

	// Inspect describes a local image by reference or id; ErrNotFound
	// when the engine has no such image (so "present?" is
	// errors.Is(err, ErrNotFound)).
	Inspect(ctx context.Context, ref string) (Image, error)

	// Pull fetches ref from its registry. ErrInvalid for a malformed
	// reference or an insecure registry the engine is not configured to
	// trust; ErrNotFound, ErrUnauthorized, ErrNoSpace with the registry's
	// words.
	Pull(ctx context.Context, ref string, opts PullOptions) (Image, error)

	// Build builds an image from a context directory and tags it.
	// ErrInvalid for a missing context or Dockerfile, or a failing
	// build step (the step's output went to opts.Log).
	Build(ctx context.Context, opts BuildOptions) (Image, error)

	// Images lists the local images with their sizes and when each was
	// last used by a container the engine still has (zero when none).
	Images(ctx context.Context) ([]Image, error)

	// RemoveImage removes a local image by id; ErrNotFound when it is
	// gone, ErrInUse when a container still uses it.
	RemoveImage(ctx context.Context, id string) error

	// Run creates and starts a container from spec, its output copied to
	// spec.Stdout and spec.Stderr until it exits. ErrInvalid for a bad
	// spec (the field named), ErrNotFound when the image is not local.
	Run(ctx context.Context, spec Spec) (string, error)

	// Wait waits for the container to exit and for its output to be
	// copied, and returns its exit code. ErrNotFound for an unknown id.
	Wait(ctx context.Context, id string) (int, error)

	// Stop sends SIGTERM, then SIGKILL after grace if it is still
	// running. Stopping a stopped container is not an error.
	Stop(ctx context.Context, id string, grace time.Duration) error

	// Remove removes the container (killing it if it runs) and its
	// anonymous volumes. Removing one that is gone is not an error.
	Remove(ctx context.Context, id string) error

	// List lists the containers, running or not, carrying every label
	// given (all containers when labels is empty).
	List(ctx context.Context, labels map[string]string) ([]Summary, error)
}

// Info is what an engine and its host say about themselves; `shoal
// location show` reports it per host.
type Info struct {
	Engine        string // "docker" or "podman"
	Version       string // the engine's version, "4.3.1"
	APIVersion    string // the Docker Engine API version negotiated
	Runtime       string // the default OCI runtime ("runc")
	StorageDriver string // "overlay2", "overlay", "vfs"
	StorageRoot   string // where images are stored
	// FreeBytes is the free space under StorageRoot, -1 when the root is
	// not on this host (a remote engine).
	FreeBytes int64
	// InsecureRegistries are the registries (host:port) and CIDRs the
	// engine reaches over plain HTTP: only those may be pulled with
	// PullOptions.Insecure.
	InsecureRegistries []string
	GPUs               GPUs
}

// GPUs are the GPUs a container can be given on this host.
type GPUs struct {
	// CDI are the CDI device names the host's CDI specs declare
	// ("nvidia.com/gpu=0"), preferred when present.
	CDI []string
	// DevNodes are the /dev/nvidia<N> device nodes, used with the
	// control nodes (/dev/nvidiactl, /dev/nvidia-uvm) when no CDI spec
	// exists.
	DevNodes []string
}

// Image is a local image.
type Image struct {
	ID      string   // the engine's id, "sha256:…"
	Refs    []string // its tags ("127.0.0.1:5000/team/train:3")
	Size    int64    // bytes, layers shared with other images included
	Created time.Time
	// LastUsed is when a container the engine still has was last
	// created from it; zero when none is left (ImageCache keeps its own
	// record across removals).
	LastUsed time.Time
	// Containers is how many containers (running or not) use it; an
	// image in use is never evicted.
	Containers int
}

// Credentials are a registry's username and password (or token as
// password). They go to the engine for one request and are never logged.
type Credentials struct {
	Username string
	Password string
}

// String hides the password so that credentials printed by mistake
// leak nothing.
func (c Credentials) String() string { return c.Username + ":<redacted>" }

// PullOptions says how to pull.
type PullOptions struct {
	// Auth are the registry's credentials; nil pulls anonymously.
	Auth *Credentials
	// Insecure allows plain HTTP; the engine must list the registry as
	// insecure (Info.InsecureRegistries) or the pull is refused.
	Insecure bool
	// Progress, when set, is called as bytes arrive.
	Progress func(Progress)
}

// Progress is a pull's progress over all its layers; Total grows as the
// engine learns each layer's size, and is 0 while none is known.
type Progress struct {
	Done, Total int64
	Status      string // the engine's last status line ("Downloading")
}

// BuildOptions says what to build.
type BuildOptions struct {
	ContextDir string // a directory on this host
	// Dockerfile is the Dockerfile's path relative to ContextDir;
	// "Dockerfile" when empty.
	Dockerfile string
	Tag        string // the reference the image gets
	Labels     map[string]string
	// Log, when set, gets the build's output line by line.
	Log func(line string)
}

// Spec is a container to run.
type Spec struct {
	Name       string   // the container's name; the engine picks one when empty
	Image      string   // a local image (Pull it first)
	Entrypoint []string // replaces the image's entrypoint when set
	Command    []string // replaces the image's command when set
	Env        map[string]string
	WorkingDir string
	Mounts     []Mount
	// User is "uid" or "uid:gid"; the image's user when empty.
	User string
	// NanoCPUs is the CPU limit in billionths of a CPU (2e9 = 2 CPUs);
	// 0 is no limit.
	NanoCPUs int64
	// MemoryBytes is the memory limit; 0 is no limit.
	MemoryBytes int64
	Devices     []Device
	// Network is "host" (the host's network: multi-node jobs reach each
	// other's MASTER_ADDR), "none", "" for the engine's default,
	// NetworkOwn, a network's name (Networker.EnsureNetwork) or
	// "container:<id>" (that container's network namespace, shared).
	Network string
	// Userns is the user namespace: "" for the engine's default, "auto"
	// (podman: a range of its own from the "containers" entries in
	// /etc/subuid and /etc/subgid, so that root inside is not root on the
	// host). Docker takes none per container (its daemon's userns-remap
	// decides) and refuses it.
	Userns string
	Labels map[string]string
	// Ulimits are set as given; nofile and nproc not given default to
	// the host's hard limits (an engine's own defaults can exceed them,
	// and the container then fails to start). A limit above the host's
	// hard limit is refused.
	Ulimits []Ulimit
	Stdout  io.Writer // nil discards
	Stderr  io.Writer // nil discards
}

// Mount is a bind mount of a host path.
type Mount struct {
	Source   string // an existing absolute host path
	Target   string // an absolute path in the container
	ReadOnly bool
	// Chown (podman only) gives Source, recursively, to the host uid and
	// gid the container's user maps to in its user namespace, so that
	// the user owns it inside.
	Chown bool
}

// Device is a device given to the container: a host device node
// ("/dev/nvidia0") or a CDI name ("nvidia.com/gpu=0").
type Device struct {
	Path string
	// CDI says Path is a CDI device name, not a node.
	CDI bool
}

// Ulimit is a resource limit ("nofile", "nproc", "memlock", …).
type Ulimit struct {
	Name       string
	Soft, Hard int64
}

// Summary is a container as List reports it.
type Summary struct {
	ID      string
	Name    string
	Image   string
	Labels  map[string]string
	State   string // "created", "running", "exited", …
	Created time.Time
}
