// Package testctr is the container tests' shared set-up: a base image
// built from Debian packages (python3 on a minbase) by mmdebstrap, built
// once per machine and shared across test packages through a cache
// directory and a file lock; a private podman service (runc, ulimits
// within the host's hard limits, its own image store); and private
// registries from Debian's docker-registry on 127.0.0.1, one anonymous
// (the base image pushed to it) and one with htpasswd auth. A test
// package starts them once (Shared) and stops them in TestMain (Main).
//
// Everything comes from Debian through the machine's configured apt
// mirror; nothing reaches the internet.
package testctr

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/internal/testenv"
)

// Env is the shared container set-up of one test process.
type Env struct {
	// Podman is the private podman service; Host is its address.
	Podman *container.Podman
	Host   string
	// Root and RunRoot are its private image store.
	Root, RunRoot string
	// BaseImage is the base image's local reference (python3 on Debian
	// minbase).
	BaseImage string
	// Registry is anonymous, with the base image pushed as
	// Registry.Addr + "/shoal-test/base:1"; AuthRegistry requires
	// AuthRegistry.User and Password (the base image is pushed there too).
	Registry, AuthRegistry *Registry
	// Setup is how long the set-up took, and BaseBuild how much of it
	// building the base image (0 when it came from the cache).
	Setup, BaseBuild time.Duration

	dir string
}

// PushedBase is the base image's path in the registries.
const PushedBase = "shoal-test/base:1"

var (
	once   sync.Once
	shared *Env
	errSet error
)

// Shared returns the process's container set-up, starting it on first
// use. Without podman, runc, mmdebstrap, docker-registry or root the
// test skips (fails under SHOAL_TEST_REQUIRE_ALL).
func Shared(t testing.TB) *Env {
	t.Helper()
	testenv.Containers(t)
	once.Do(func() { shared, errSet = start() })
	if errSet != nil {
		t.Fatalf("container test set-up: %v", errSet)
	}
	return shared
}

// Main runs a test package's tests and then stops the shared set-up;
// call it from TestMain: os.Exit(testctr.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.close()
	}
	return code
}

// Start starts a set-up of its own for a program that is not a test (a
// benchmark): the same base image, registries and podman service. The
// caller closes it.
func Start() (*Env, error) { return start() }

// Close stops what Start started and removes its store.
func (e *Env) Close() { e.close() }

// PodmanCLI runs the podman CLI on the set-up's private store (runc, its
// root and run root).
func (e *Env) PodmanCLI(ctx context.Context, args ...string) error { return e.podman(ctx, args...) }

// start builds (or finds) the base image, starts the registries and the
// podman service, imports the base image and pushes it.
func start() (env *Env, err error) {
	began := time.Now()
	dir, err := os.MkdirTemp("", "shoal-testctr-")
	if err != nil {
		return nil, err
	}
	env = &Env{dir: dir, Root: filepath.Join(dir, "root"), RunRoot: filepath.Join(dir, "runroot")}
	defer func() {
		if err != nil {
			env.close()
			env = nil
		}
	}()
	tarball, built, err := BaseTarball()
	if err != nil {
		return env, err
	}
	env.BaseBuild = built
	// The registries start with the base image already pushed when an
	// earlier set-up on this machine left their storage in the cache: the
	// two pushes (each compressing the image's layer) were most of a
	// set-up's time, paid again by every test process (seven packages,
	// and each e2e shard).
	seeded := seedRegistries(tarball, filepath.Join(dir, "registry", "data"), filepath.Join(dir, "auth-registry", "data"))
	if env.Registry, err = StartRegistry(filepath.Join(dir, "registry"), false); err != nil {
		return env, err
	}
	if env.AuthRegistry, err = StartRegistry(filepath.Join(dir, "auth-registry"), true); err != nil {
		return env, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env.Podman, err = container.StartPodman(ctx, container.PodmanConfig{
		Dir: filepath.Join(dir, "podman"), Root: env.Root, RunRoot: env.RunRoot,
		InsecureRegistries: []string{env.Registry.Addr, env.AuthRegistry.Addr},
	})
	if err != nil {
		return env, err
	}
	env.Host = env.Podman.Host
	env.BaseImage = "localhost/shoal-test/base:1"
	if err := env.podman(ctx, "import", tarball, env.BaseImage); err != nil {
		return env, err
	}
	if !seeded {
		if err := env.podman(ctx, "push", "--tls-verify=false", env.BaseImage, env.Registry.Addr+"/"+PushedBase); err != nil {
			return env, err
		}
		if err := env.podman(ctx, "push", "--tls-verify=false", "--creds", env.AuthRegistry.User+":"+env.AuthRegistry.Password,
			env.BaseImage, env.AuthRegistry.Addr+"/"+PushedBase); err != nil {
			return env, err
		}
		saveRegistrySeed(tarball, filepath.Join(dir, "registry", "data"))
	}
	env.Setup = time.Since(began)
	return env, nil
}

// ResetStore removes a private store's containers, images and files
// (`podman system reset --force` on the store that storeArgs name:
// --root, --runroot, --tmpdir) and leaves every network alone. A reset
// removes every network of its network config dir, and that folder is
// the host's (/etc/containers/networks), whatever the store: the reset
// of one test package's store removed the subnet networks other
// packages' containers were running on (e2e TestInstancesInASubnet: the
// next job on the subnet made the network anew, on a bridge and
// addresses of its own, and could not reach the instances already on
// the old one). So the reset runs with conf (the store's service's
// containers.conf; empty for podman's defaults) plus an empty network
// config dir of its own. The store's own containers must be gone
// already: a reset would not disconnect them from the host's networks.
func ResetStore(ctx context.Context, conf string, storeArgs ...string) error {
	dir, err := os.MkdirTemp("", "shoal-reset-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var text string
	if conf != "" {
		b, err := os.ReadFile(conf)
		if err != nil {
			return err
		}
		text = string(b)
		if strings.Contains(text, "[network]") {
			return fmt.Errorf("%s has a [network] table already", conf)
		}
	} else {
		// As the services' (StartPodman): journald may be absent.
		text = "[engine]\nevents_logger = \"file\"\n"
	}
	networks := filepath.Join(dir, "networks")
	if err := os.Mkdir(networks, 0o700); err != nil {
		return err
	}
	text += fmt.Sprintf("\n[network]\nnetwork_config_dir = %q\n", networks)
	resetConf := filepath.Join(dir, "containers.conf")
	if err := os.WriteFile(resetConf, []byte(text), 0o600); err != nil {
		return err
	}
	args := append(append([]string{"--runtime", "runc"}, storeArgs...), "system", "reset", "--force")
	cmd := exec.CommandContext(ctx, "podman", args...)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+resetConf)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("podman system reset: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// podman runs the podman CLI on the private store.
func (e *Env) podman(ctx context.Context, args ...string) error {
	full := append([]string{"--runtime", "runc", "--root", e.Root, "--runroot", e.RunRoot, "--tmpdir", container.TmpDir(filepath.Join(e.dir, "podman"))}, args...)
	cmd := exec.CommandContext(ctx, "podman", full...)
	// The service's own configuration (ulimits within the host's hard
	// limits, its insecure registries), which StartPodman wrote.
	pd := filepath.Join(e.dir, "podman")
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+filepath.Join(pd, "containers.conf"), "CONTAINERS_REGISTRIES_CONF="+filepath.Join(pd, "registries.conf"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("podman %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// close stops everything and removes the private store (podman unmounts
// its layers first: a plain removal would meet busy mounts), leaving the
// host's networks (ResetStore).
func (e *Env) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if e.Podman != nil {
		_ = e.podman(ctx, "rm", "--all", "--force", "--time", "0")
		_ = e.Podman.Close()
		pd := filepath.Join(e.dir, "podman")
		_ = ResetStore(ctx, filepath.Join(pd, "containers.conf"), "--root", e.Root, "--runroot", e.RunRoot, "--tmpdir", container.TmpDir(pd))
	}
	for _, r := range []*Registry{e.Registry, e.AuthRegistry} {
		if r != nil {
			r.Close()
		}
	}
	_ = os.RemoveAll(e.dir)
}
