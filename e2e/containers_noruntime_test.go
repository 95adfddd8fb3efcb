package e2e_test

import (
	"strings"
	"testing"
	"time"
)

// A job with an image, on a location whose hosts reported no container
// runtime (their agents run with containers off), is refused at submit
// with the host's reason; `shoal location show` shows that reason, and a
// job without an image still runs on the host.
func TestContainerJobNoRuntimeRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig, Env: []string{"SHOAL_AGENT_CONTAINERS=off"}})
	const cluster = "noctr"
	createCluster(t, s, cluster, "--size", "Standard_DS3_v2", "--min-instances", "1", "--max-instances", "1")
	waitFor(t, 60*time.Second, "the node to join", func() (bool, string) {
		nodes := listNodes(t, s, cluster)
		return len(nodes) == 1 && nodes[0].State == "idle", describeNodes(nodes)
	})
	node := listNodes(t, s, cluster)[0].ID
	_, stderr, code := run(t, s.env, "job", "create", "-f", writeJobFile(t, "command: echo hi\ncompute: azureml:"+cluster+"\nenvironment:\n  image: python:3.11\n"))
	for _, want := range []string{"environment", "no host of location \"local\" has a usable container runtime", node, "containers are off on this node"} {
		if code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("image job on hosts without a runtime: exit %d, %q; want refused saying %q", code, stderr, want)
		}
	}
	if got := mustRun(t, s.env, "location", "show", "--name", "local", "-o", "json"); !strings.Contains(got, "containers are off on this node") {
		t.Errorf("location show does not say the host has no runtime:\n%s", got)
	}
	j, log := runToEnd(t, s, writeJobFile(t, "command: echo on-the-host\ncompute: azureml:"+cluster+"\n"), time.Minute)
	if j.Status != "Completed" || !strings.Contains(log, "on-the-host") || strings.Contains(log, "in a container") {
		t.Errorf("a job without an image: %v:\n%s", j, log)
	}
}
