package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/internal/testctr"
)

// A job whose environment names an image runs in a container of it,
// pulled by the node's agent from a private registry: its output shows
// the image's files (python3, no podman) and none of the host's, as the
// run-as account, and no container is left once it completes.
func TestContainerJobRunsInItsImage(t *testing.T) {
	t.Parallel()
	env := testctr.Shared(t)
	s := startServer(t, serverOpts{Env: []string{"SHOAL_AGENT_CONTAINER_HOST=" + env.Host}})
	createCluster(t, s, "ctr", "--size", "Standard_DS3_v2", "--max-instances", "1")
	marker := filepath.Join(s.dir, "host-marker")
	if err := os.WriteFile(marker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	image := env.Registry.Addr + "/" + testctr.PushedBase
	file := writeJobFile(t, "command: >-\n  python3 -c 'print(\"python\", 3)';\n"+
		"  if test -e /usr/bin/podman; then echo HOST-PODMAN; else echo no-podman; fi;\n"+
		"  if test -e "+marker+"; then echo HOST-FILE; else echo no-host-file; fi;\n"+
		"  echo uid=$(id -u)\n"+
		"compute: azureml:ctr\nenvironment:\n  image: "+image+"\n")
	name := submitJob(t, s, file)
	j := waitJob(t, s, name, 4*time.Minute, "Completed", "Failed")
	log := jobLog(t, s, name)
	if j.Status != "Completed" {
		t.Fatalf("%v\nlog:\n%s", j, log)
	}
	for _, want := range []string{"in a container of " + image, "python 3", "no-podman", "no-host-file"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "uid=0\n") || !strings.Contains(log, "uid=") {
		t.Errorf("the job ran as root (or printed no uid):\n%s", log)
	}
	assertNoContainersOf(t, env, s.nodesDir)
}

// assertNoShoalContainers is the leak check: no container the agents
// started (labelled shoal.node) is left on the shared engine.
func assertNoShoalContainers(t *testing.T, env *testctr.Env) {
	t.Helper()
	assertNoContainersOf(t, env, "")
}

// assertNoContainersOf is the leak check of one server's agents: no
// container of theirs (containersOf) is left on the shared engine. It
// lets a test that starts containers run beside others (t.Parallel);
// nodesDir "" checks every server's.
func assertNoContainersOf(t *testing.T, env *testctr.Env, nodesDir string) {
	t.Helper()
	for _, c := range containersOf(t, env, nodesDir) {
		t.Errorf("container %s of node %s (attempt %s) left behind, state %s", c.ID, c.Labels[ctrhost.LabelNode], c.Labels[ctrhost.LabelAttempt], c.State)
	}
}

// containersOf lists the containers on the shared engine that the agents
// of the server whose --nodes-dir is nodesDir started: labelled with a
// node (ctrhost.LabelNode) whose engine folder (ctrhost.LabelEngine, in
// the node's work dir) is under nodesDir, or with no engine label at all
// (whoever left it). nodesDir "" lists every agent's container.
func containersOf(t *testing.T, env *testctr.Env, nodesDir string) []container.Summary {
	t.Helper()
	e, err := container.Open(context.Background(), container.Config{Host: env.Host})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// Bounded: podman's list waits on every container's lock, and one
	// held for good (seen once under CI's load) hung the whole package
	// until its timeout instead of failing here, saying so.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	all, err := e.List(ctx, nil)
	if err != nil {
		t.Fatalf("listing the engine's containers: %v", err)
	}
	var mine []container.Summary
	for _, c := range all {
		engine := c.Labels[ctrhost.LabelEngine]
		if c.Labels[ctrhost.LabelNode] != "" && (nodesDir == "" || engine == "" || strings.HasPrefix(engine, nodesDir+string(filepath.Separator))) {
			mine = append(mine, c)
		}
	}
	return mine
}
