package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testk8s"
)

// gangLocation is kubernetesLocation with its request fraction and gang
// settings.
func gangLocation(c *testk8s.Cluster, ns string, fraction float64, extra string) string {
	loc := kubernetesLocation(c, ns)
	loc = strings.Replace(loc, "request_fraction: 0.01", "request_fraction: "+strconv.FormatFloat(fraction, 'f', -1, 64), 1)
	return loc + extra
}

// oneOfTwoFraction is a request fraction of Standard_DS3_v2 (4 vCPUs,
// 14 GB) at which one node's pod fits the test cluster's one node and two
// do not: 60 % of its allocatable CPU or memory, whichever binds.
func oneOfTwoFraction(t *testing.T, c *testk8s.Cluster) float64 {
	t.Helper()
	var node struct {
		Status struct {
			Allocatable map[string]string `json:"allocatable"`
		} `json:"status"`
	}
	if err := c.Client.Do(context.Background(), http.MethodGet, "/api/v1/nodes/localhost", nil, &node); err != nil {
		t.Fatalf("read the node: %v", err)
	}
	cpu := quantity(t, node.Status.Allocatable["cpu"])
	mem := quantity(t, node.Status.Allocatable["memory"])
	f := min(0.6*cpu/4, 0.6*mem/(14<<30))
	t.Logf("node allocatable cpu %g, memory %g: request fraction %.3f", cpu, mem, f)
	return f
}

// quantity parses the few forms of a Kubernetes quantity a node's
// allocatable uses (2, 1500m, 8021316Ki).
func quantity(t *testing.T, q string) float64 {
	t.Helper()
	mult := 1.0
	for suffix, m := range map[string]float64{"m": 1e-3, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30} {
		if strings.HasSuffix(q, suffix) {
			q, mult = strings.TrimSuffix(q, suffix), m
			break
		}
	}
	v, err := strconv.ParseFloat(q, 64)
	if err != nil {
		t.Fatalf("quantity %q: %v", q, err)
	}
	return v * mult
}

// A two-node job on a cluster that holds one of its pods: the pod that
// runs does not keep running while the other is Pending — after the gang
// timeout both go, the job says gang_timeout, and no pod of it stays.
func testKubernetesGangThatCannotBeWholeHoldsNoPod(t *testing.T) {
	c := testk8s.Shared(t)
	c.ImportAgentImage(t)
	ns := c.Namespace(t)
	// The timeout leaves the first pod time to run before the gang is
	// released: on a loaded 2-core machine a pod took over 10 s to start
	// (CI, 2026-12-01), and the test never saw it Running.
	loc := gangLocation(c, ns, oneOfTwoFraction(t, c), "      gang_timeout: 40s\n      gang_backoff: 5m\n")
	s := startServer(t, serverOpts{Config: fastJobsConfig + "locations:\n  - name: local\n" + loc})
	createCluster(t, s, "gang", "--location", "k8s", "--size", "Standard_DS3_v2", "--max-instances", "2")
	name := submitJob(t, s, writeJobFile(t, "type: command\ncommand: echo ranks run\ncompute: azureml:gang\nresources:\n  instance_count: 2\n"))

	// First one pod Running, the other Pending for capacity.
	waitFor(t, 2*time.Minute, "one pod Running and one Pending", func() (bool, string) {
		pods := podPhases(t, c, ns)
		running, pending := 0, 0
		for _, p := range pods {
			running += b2i(p == "Running")
			pending += b2i(p == "Pending")
		}
		return running == 1 && pending == 1, fmt.Sprint(pods)
	})
	// Then, past the gang timeout, none: the job waits with the reason.
	waitFor(t, 2*time.Minute, "the gang released and its pods deleted", func() (bool, string) {
		j := getJob(t, s, name)
		pods := podPhases(t, c, ns)
		return j.StatusCode == "gang_timeout" && len(pods) == 0, fmt.Sprintf("%s (%s), pods %v", j, j.StatusCode, pods)
	})
	j := getJob(t, s, name)
	if j.Status != "Queued" || j.AttemptCount != 0 || !strings.Contains(j.StatusReason, "did not come up whole within gang_timeout 40s") ||
		!strings.Contains(j.StatusReason, "asked for again at") {
		t.Errorf("%s; want it queued, never started, saying the gang was released and when it is asked for again", j)
	}
	// The backoff holds: no pod comes back meanwhile.
	time.Sleep(5 * time.Second)
	if pods := podPhases(t, c, ns); len(pods) != 0 {
		t.Errorf("pods %v during the gang's backoff; want none", pods)
	}
	if nodes := listNodes(t, s, "gang"); len(nodes) != 0 {
		t.Errorf("nodes %s during the gang's backoff; want none", describeNodes(nodes))
	}
}

// A two-node job that fits runs whole: both pods come up within the gang
// timeout and both ranks run.
func testKubernetesGangThatFitsRunsWhole(t *testing.T) {
	c := testk8s.Shared(t)
	c.ImportAgentImage(t)
	ns := c.Namespace(t)
	s := startServer(t, serverOpts{Config: fastJobsConfig + "locations:\n  - name: local\n" + gangLocation(c, ns, 0.01, "      gang_timeout: 90s\n")})
	createCluster(t, s, "gang", "--location", "k8s", "--size", "Standard_DS3_v2", "--max-instances", "2")
	name := submitJob(t, s, writeJobFile(t, "type: command\ncommand: echo ranks run\ncompute: azureml:gang\nresources:\n  instance_count: 2\n"))
	j := waitJob(t, s, name, 3*time.Minute, "Completed")
	if j.AttemptCount != 1 {
		t.Errorf("%s; want one attempt", j)
	}
	if atts := listAttempts(t, s, name); len(atts) != 1 || len(atts[0].Ranks) != 2 {
		t.Errorf("attempts %+v; want one of two ranks", atts)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
