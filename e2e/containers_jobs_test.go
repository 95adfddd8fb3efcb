package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/internal/testctr"
)

// ctrFixture is the server the container jobs' subtests share: its
// nodes' agents use the shared podman service, and its config maps a
// curated name to the test base image in the anonymous registry.
type ctrFixture struct {
	s   *server
	env *testctr.Env
	// image is the base image as a job names it, in the anonymous
	// registry.
	image string
}

// containerJobsConfig gives TestContainerJobs's nodes leases of 4 s and
// as much grace, not the 1 s fastJobsConfig had then: it runs in the test command's
// first minutes beside the compilation of every other test binary, where
// a node with a 1 s lease was lost (2026-11-30, when it was serial), and
// none of its subtests waits for a lease to run out.
const containerJobsConfig = "node_lease: 4s\nnode_lease_grace: 4s\nkill_grace: 1s\n"

// TestContainerJobs runs, on one server with real agents (the local
// provider) and real podman, what a user does with images: a build
// reused, a registered and a curated environment, a two-node job,
// cancel and preemption, a pull failure, a private registry with a
// login, and the host's runtime in `shoal location show`. The subtests
// run in parallel, each on clusters of its own, and the test beside the
// others: its leak check at the end counts its own server's containers.
func TestContainerJobs(t *testing.T) {
	t.Parallel()
	env := testctr.Shared(t)
	image := env.Registry.Addr + "/" + testctr.PushedBase
	cfg := containerJobsConfig + "curated_environments:\n" +
		"  sklearn-1.5: " + image + "\n" +
		"  AzureML-sklearn-1.0-ubuntu20.04-py38-cpu: " + image + "\n"
	f := &ctrFixture{s: startServer(t, serverOpts{Config: cfg, Env: []string{"SHOAL_AGENT_CONTAINER_HOST=" + env.Host}}), env: env, image: image}
	t.Run("group", func(t *testing.T) {
		for _, c := range []struct {
			name string
			run  func(*testing.T, *ctrFixture)
		}{
			{"Build", testContainerBuild},
			{"Registered", testContainerRegistered},
			{"Curated", testContainerCurated},
			{"TwoNodes", testContainerTwoNodes},
			{"TensorFlow", testContainerTensorFlow},
			{"Cancel", testContainerCancel},
			{"Preempt", testContainerPreempt},
			{"PullFailure", testContainerPullFailure},
			{"PullUnreachable", testContainerPullUnreachable},
			{"PrivateRegistry", testContainerPrivateRegistry},
			{"OwnNetwork", testContainerOwnNetwork},
			{"Services", testContainerServices},
		} {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				began := time.Now()
				c.run(t, f)
				t.Logf("%s took %s", c.name, time.Since(began).Round(100*time.Millisecond))
			})
		}
	})
	assertLocationShowsRuntime(t, f.s)
	assertNoContainersOf(t, env, f.s.nodesDir)
}

// writeFiles writes files (path relative to a fresh directory: content)
// and returns the directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// jobEvents is `shoal job events` of a job.
func jobEvents(t *testing.T, s *server, name string) []map[string]any {
	t.Helper()
	return runJSON[[]map[string]any](t, s.env, "job", "events", "-n", name, "-o", "json")
}

// runToEnd submits the job file and waits until it ends; it returns the
// job and its log.
func runToEnd(t *testing.T, s *server, file string, timeout time.Duration) (jobView, string) {
	t.Helper()
	name := submitJob(t, s, file)
	j := waitJob(t, s, name, timeout, "Completed", "Failed", "Canceled")
	return j, jobLog(t, s, name)
}

// nodeContainers lists the containers the agent of node, of f's server,
// started that are still on the shared engine. Node IDs are numbered per
// server (<cluster>-n<seq>), so the node's label alone would also match
// another test's server's node of a cluster of the same name: the engine
// folder label, under f's server's nodes folder, tells them apart.
func nodeContainers(t *testing.T, f *ctrFixture, node string) []container.Summary {
	t.Helper()
	var mine []container.Summary
	for _, c := range containersOf(t, f.env, f.s.nodesDir) {
		if c.Labels[ctrhost.LabelNode] == node {
			mine = append(mine, c)
		}
	}
	return mine
}

// describeContainers is a list of containers for messages.
func describeContainers(list []container.Summary) string {
	var b strings.Builder
	for _, c := range list {
		b.WriteString(" " + c.ID + " (" + c.State + ", attempt " + c.Labels["shoal.attempt"] + ")")
	}
	return b.String()
}

// waitNoContainers waits (briefly: removal follows the container's exit)
// until node has no container left.
func waitNoContainers(t *testing.T, f *ctrFixture, node string) {
	t.Helper()
	waitFor(t, 10*time.Second, "no container of node "+node+" left", func() (bool, string) {
		list := nodeContainers(t, f, node)
		return len(list) == 0, describeContainers(list)
	})
}

// waitRunningContainer waits until node runs a container (the rank's
// process has started in it).
func waitRunningContainer(t *testing.T, f *ctrFixture, node string) {
	t.Helper()
	waitFor(t, 90*time.Second, "a running container on node "+node, func() (bool, string) {
		list := nodeContainers(t, f, node)
		for _, c := range list {
			if c.State == "running" {
				return true, ""
			}
		}
		return false, describeContainers(list)
	})
}

// assertLocationShowsRuntime checks that `shoal location show` shows, for
// the host the nodes ran on, the engine they found and its version.
func assertLocationShowsRuntime(t *testing.T, s *server) {
	t.Helper()
	type hostView struct {
		Name    string `json:"name"`
		Runtime *struct {
			Engine  string `json:"engine"`
			Version string `json:"version"`
			Error   string `json:"error"`
		} `json:"container_runtime"`
		Node string `json:"container_runtime_node"`
	}
	loc := runJSON[struct {
		Hosts []hostView `json:"hosts"`
	}](t, s.env, "location", "show", "--name", "local", "-o", "json")
	for _, h := range loc.Hosts {
		if h.Runtime != nil && h.Runtime.Engine == "podman" && h.Runtime.Version != "" && h.Runtime.Error == "" && h.Node != "" {
			return
		}
	}
	t.Errorf("location show names no host with podman and its version: %+v", loc.Hosts)
}
