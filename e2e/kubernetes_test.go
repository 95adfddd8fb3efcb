package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testk8s"
	"github.com/shoal-ml/shoal/provider/kubernetes"
)

// TestKubernetes runs the Kubernetes tests one after another, as
// subtests: they share the test process's one-node cluster
// (testk8s.Shared), and the gang and unfittable tests count its free
// capacity, so no two may run at once. Together they run beside the
// other tests (t.Parallel), none of which uses the cluster.
func TestKubernetes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"AttachedComputeRunsAnInstanceType", testKubernetesAttachedComputeRunsAnInstanceType},
		{"GangThatCannotBeWholeHoldsNoPod", testKubernetesGangThatCannotBeWholeHoldsNoPod},
		{"GangThatFitsRunsWhole", testKubernetesGangThatFitsRunsWhole},
		{"ClusterScalesRunsAndRequeuesEvicted", testKubernetesClusterScalesRunsAndRequeuesEvicted},
		{"UnfittableSizeShowsKubernetesReason", testKubernetesUnfittableSizeShowsKubernetesReason},
		{"IdentityInsideThePod", testKubernetesIdentityInsideThePod},
	} {
		t.Run(c.name, c.run)
	}
}

// kubernetesLocation is the YAML of a location on the test cluster's
// namespace ns: busybox nodes, the agent injected from the test's agent
// image, host network (the cluster has no kube-proxy; the server listens
// on the host's 127.0.0.1), a hundredth of each size requested (its one
// node has the host's few CPUs).
func kubernetesLocation(c *testk8s.Cluster, ns string) string {
	return fmt.Sprintf(`  - name: k8s
    provider: kubernetes
    kubernetes:
      kubeconfig: %s
      namespace: %s
      node_image: %s
      agent_image: %s
      image_pull_policy: Never
      host_network: true
      request_fraction: 0.01
      termination_grace: 5s
      labels: {team: e2e}
`, c.Kubeconfig, ns, testk8s.BusyboxImage, testk8s.AgentImage)
}

// podPhases lists the namespace's pods and their phases.
func podPhases(t *testing.T, c *testk8s.Cluster, ns string) map[string]string {
	t.Helper()
	var list struct {
		Items []testk8s.Pod `json:"items"`
	}
	if err := c.Client.Do(context.Background(), http.MethodGet, "/api/v1/namespaces/"+ns+"/pods", nil, &list); err != nil {
		t.Fatalf("list pods: %v", err)
	}
	out := map[string]string{}
	for _, p := range list.Items {
		out[p.Metadata.Name] = p.Status.Phase
	}
	return out
}

// A cluster on a kubernetes location: two jobs scale it 0 → 2 pods, run
// in the node image with their logs streamed, and the idle nodes' pods
// are deleted; a pod evicted under a running job is a preempted node and
// the job runs again without spending a retry; the location's show never
// shows the kubeconfig's token.
func testKubernetesClusterScalesRunsAndRequeuesEvicted(t *testing.T) {
	c := testk8s.Shared(t)
	c.ImportAgentImage(t)
	ns := c.Namespace(t)
	s := startServer(t, serverOpts{Config: fastJobsConfig + "locations:\n  - name: local\n" + kubernetesLocation(c, ns)})

	out := mustRun(t, s.env, "location", "show", "-n", "k8s", "-o", "json")
	if strings.Contains(out, c.Token) {
		t.Errorf("location show prints the kubeconfig's token:\n%s", out)
	}
	createCluster(t, s, "kube", "--location", "k8s", "--max-instances", "2", "--idle-time-before-scale-down", "2")
	// Long enough that both jobs are still Running when the test, polling
	// one then the other on a loaded machine, looks at them and their
	// pods (3 s was not: the second had completed under load average 40).
	file := writeJobFile(t, "type: command\ncommand: echo node $SHOAL_NODE_ID as $(id -u) in $(cat /etc/hostname 2>/dev/null || echo pod); sleep 15\ncompute: azureml:kube\n")
	names := []string{submitJob(t, s, file), submitJob(t, s, file)}
	for _, n := range names {
		waitJob(t, s, n, 2*time.Minute, "Running")
	}
	nodes := listNodes(t, s, "kube")
	if len(nodes) != 2 {
		t.Fatalf("nodes %s; want 2", describeNodes(nodes))
	}
	// The kubelet reports the phase a moment after the containers start.
	waitFor(t, 30*time.Second, "both nodes' pods to be Running", func() (bool, string) {
		pods := podPhases(t, c, ns)
		return pods[kubernetes.PodName(nodes[0].ID)] == "Running" && pods[kubernetes.PodName(nodes[1].ID)] == "Running", fmt.Sprint(pods)
	})
	for _, n := range names {
		waitJob(t, s, n, time.Minute, "Completed")
		if log := jobLog(t, s, n); !strings.Contains(log, "node kube-n") || !strings.Contains(log, " as 1000 ") {
			t.Errorf("job %s's log %q: want its node and uid 1000 (non-root)", n, log)
		}
	}
	waitFor(t, time.Minute, "the cluster to scale back to 0 and its pods to go", func() (bool, string) {
		nodes := listNodes(t, s, "kube")
		pods := podPhases(t, c, ns)
		return len(nodes) == 0 && len(pods) == 0, fmt.Sprintf("nodes %s, pods %v", describeNodes(nodes), pods)
	})

	// Evicted (the eviction API, as a drain would): the agent hears
	// SIGTERM, the node is preempted and the job requeued, retries
	// unspent.
	long := submitJob(t, s, writeJobFile(t, `type: command
command: if [ "$SHOAL_ATTEMPT" = 1 ]; then sleep 120; fi; echo attempt $SHOAL_ATTEMPT done
compute: azureml:kube
`))
	waitJob(t, s, long, 2*time.Minute, "Running")
	a := currentAttempt(t, s, long)
	pod := kubernetes.PodName(a.Ranks[0].NodeID)
	eviction := map[string]any{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": map[string]any{"name": pod, "namespace": ns}}
	if err := c.Client.Do(context.Background(), http.MethodPost, "/api/v1/namespaces/"+ns+"/pods/"+pod+"/eviction", eviction, nil); err != nil {
		t.Fatalf("evict %s: %v", pod, err)
	}
	j := waitJob(t, s, long, 2*time.Minute, "Completed")
	if j.AttemptCount != 2 || j.InfraRequeues != 1 || j.FailedAttempts != 0 {
		t.Errorf("%s; want a second attempt after the eviction, no retry spent", j)
	}
	if atts := listAttempts(t, s, long); len(atts) != 2 || atts[0].Status != "Preempted" {
		t.Errorf("attempts %+v; want the first Preempted", atts)
	}
	if log := jobLog(t, s, long); !strings.Contains(log, "attempt 2 done") {
		t.Errorf("the second attempt's log: %q", log)
	}
	if b, err := os.ReadFile(s.logPath); err == nil && strings.Contains(string(b), c.Token) {
		t.Error("the server's log holds the kubeconfig's token")
	}
}

// A size no node of the cluster can hold (a GPU, on a cluster without
// any) leaves its pod Pending: the node's state reason and the waiting
// job's reason are Kubernetes' own.
func testKubernetesUnfittableSizeShowsKubernetesReason(t *testing.T) {
	c := testk8s.Shared(t)
	c.ImportAgentImage(t)
	ns := c.Namespace(t)
	s := startServer(t, serverOpts{Config: fastJobsConfig + "locations:\n  - name: local\n" + kubernetesLocation(c, ns)})
	createCluster(t, s, "gpus", "--location", "k8s", "--size", "Standard_NC6", "--max-instances", "1")
	name := submitJob(t, s, writeJobFile(t, "type: command\ncommand: nvidia-smi\ncompute: azureml:gpus\n"))
	const want = "Insufficient nvidia.com/gpu"
	waitFor(t, 2*time.Minute, "the node and the job to show Kubernetes' reason", func() (bool, string) {
		nodes := listNodes(t, s, "gpus")
		j := getJob(t, s, name)
		ok := len(nodes) == 1 && strings.Contains(nodes[0].StateReason, want) && strings.Contains(j.StatusReason, want)
		return ok, fmt.Sprintf("nodes %s, job %s", describeNodes(nodes), j)
	})
	if phases := podPhases(t, c, ns); len(phases) != 1 {
		t.Errorf("pods %v; want the one Pending pod", phases)
	}
}

// Inside a node's pod, the job reaches the managed identity endpoint its
// agent serves there (MSI_ENDPOINT, with its secret) and gets a token:
// the identity works from Kubernetes as from any node.
func testKubernetesIdentityInsideThePod(t *testing.T) {
	c := testk8s.Shared(t)
	c.ImportAgentImage(t)
	ns := c.Namespace(t)
	s := startServer(t, serverOpts{Config: fastJobsConfig + "locations:\n  - name: local\n" + kubernetesLocation(c, ns)})
	createCluster(t, s, "kube-id", "--location", "k8s", "--max-instances", "1", "--idle-time-before-scale-down", "2",
		"--identity-type", "SystemAssigned")
	name := submitJob(t, s, writeJobFile(t, `type: command
command: |
  wget -q -O - --header "Secret: $MSI_SECRET" "$MSI_ENDPOINT?resource=https://management.azure.com&api-version=2017-09-01"
compute: azureml:kube-id
`))
	j := waitJob(t, s, name, 2*time.Minute, "Completed", "Failed")
	log := jobLog(t, s, name)
	if j.Status != "Completed" || !strings.Contains(log, `"access_token":"ey`) {
		t.Fatalf("the identity endpoint from inside the pod: %s\n%s", j, log)
	}
}
