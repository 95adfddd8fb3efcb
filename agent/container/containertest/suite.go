// Package containertest is the conformance suite every
// container.Runtime passes: the engine's description, pulls (anonymous,
// with credentials, refused, not found, malformed), builds, running a
// container with everything the agent gives a rank (mounts, env, user,
// limits, network, ulimits, labels, output), stopping with a grace
// period, removal that leaves nothing, and the image cache's eviction
// on the real engine; and for an Execer, processes started in a running
// container (streams, terminal and resize, signals, exit codes) and
// connections dialled from inside its network namespace.
package containertest

import (
	"testing"

	"github.com/shoal-ml/shoal/agent/container"
)

// Harness is a Runtime and the fixtures it is tested with.
type Harness struct {
	Runtime container.Runtime
	// BaseImage is a local image with /bin/sh and python3.
	BaseImage string
	// Registry is an insecure (HTTP) registry the engine lists as such,
	// holding Pushed (a path, "team/base:1") and requiring no
	// credentials.
	Registry string
	// AuthRegistry holds Pushed too, and requires Credentials.
	AuthRegistry string
	Credentials  container.Credentials
	Pushed       string
}

// Run runs the suite against h.
func Run(t *testing.T, h Harness) {
	t.Run("Info", func(t *testing.T) { testInfo(t, h) })
	t.Run("Pull", func(t *testing.T) { testPull(t, h) })
	t.Run("PullRefused", func(t *testing.T) { testPullRefused(t, h) })
	t.Run("Build", func(t *testing.T) { testBuild(t, h) })
	t.Run("RunSpec", func(t *testing.T) { testRunSpec(t, h) })
	t.Run("RunRefusesBadSpec", func(t *testing.T) { testRunRefusesBadSpec(t, h) })
	t.Run("Network", func(t *testing.T) { testNetwork(t, h) })
	t.Run("Stop", func(t *testing.T) { testStop(t, h) })
	t.Run("RemoveLeavesNothing", func(t *testing.T) { testRemove(t, h) })
	t.Run("ImageCache", func(t *testing.T) { testImageCache(t, h) })
	t.Run("Exec", func(t *testing.T) { testExec(t, h) })
	t.Run("ExecTerminal", func(t *testing.T) { testExecTerminal(t, h) })
	t.Run("ExecSignal", func(t *testing.T) { testExecSignal(t, h) })
	t.Run("ExecRefusesBadSpec", func(t *testing.T) { testExecRefusesBadSpec(t, h) })
	t.Run("DialInNetwork", func(t *testing.T) { testDialInNetwork(t, h) })
}
