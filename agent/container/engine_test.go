package container_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/container/containertest"
	"github.com/shoal-ml/shoal/internal/testctr"
	"github.com/shoal-ml/shoal/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testctr.Main(m)) }

// The conformance suite against podman's service, the engine the test
// command installs.
func TestEnginePodman(t *testing.T) {
	env := testctr.Shared(t)
	t.Logf("set-up took %s (base image build %s, 0 when cached)", env.Setup.Round(time.Millisecond), env.BaseBuild.Round(time.Millisecond))
	e, err := container.Open(context.Background(), container.Config{Host: env.Host, EnginePID: env.Podman.PID()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	containertest.Run(t, containertest.Harness{
		Runtime: e, BaseImage: env.BaseImage,
		Registry: env.Registry.Addr, AuthRegistry: env.AuthRegistry.Addr,
		Credentials: container.Credentials{Username: env.AuthRegistry.User, Password: env.AuthRegistry.Password},
		Pushed:      testctr.PushedBase,
	})
}

// The same suite against Docker's daemon, where one runs: the test
// command does not install Docker (podman serves the same API, and two
// engines on one test host is not what a node runs). Docker reaches the
// test registries on 127.0.0.1 over HTTP by default (127.0.0.0/8 is in
// its insecure CIDRs), and pulls its base image from there.
func TestEngineDocker(t *testing.T) {
	const sock = "/var/run/docker.sock"
	testenv.Optional(t, "Docker's daemon at "+sock, func() error {
		_, err := os.Stat(sock)
		return err
	}, "install and start Docker (docker.io) to run the suite against it")
	env := testctr.Shared(t)
	ctx := context.Background()
	e, err := container.Open(ctx, container.Config{Host: "unix://" + sock})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	base := env.Registry.Addr + "/" + testctr.PushedBase
	if _, err := e.Pull(ctx, base, container.PullOptions{Insecure: true}); err != nil {
		t.Fatal(err)
	}
	containertest.Run(t, containertest.Harness{
		Runtime: e, BaseImage: base,
		Registry: env.Registry.Addr, AuthRegistry: env.AuthRegistry.Addr,
		Credentials: container.Credentials{Username: env.AuthRegistry.User, Password: env.AuthRegistry.Password},
		Pushed:      testctr.PushedBase,
	})
}

// Nothing answers on a socket no engine serves: the node has no runtime.
func TestOpenWithoutEngine(t *testing.T) {
	_, err := container.Open(context.Background(), container.Config{Host: "unix://" + t.TempDir() + "/none.sock"})
	if !errors.Is(err, container.ErrRuntimeMissing) {
		t.Fatalf("got %v, want ErrRuntimeMissing", err)
	}
	_, err = container.StartPodman(context.Background(), container.PodmanConfig{Binary: "podman-not-installed", Dir: t.TempDir()})
	if !errors.Is(err, container.ErrRuntimeMissing) {
		t.Fatalf("StartPodman without podman: got %v, want ErrRuntimeMissing", err)
	}
}
