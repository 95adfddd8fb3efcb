package kubernetes_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testk8s"
	"github.com/shoal-ml/shoal/provider/kubernetes"
	"github.com/shoal-ml/shoal/provider/providertest"
)

func TestMain(m *testing.M) { os.Exit(testk8s.Main(m)) }

// newProvider is a provider on a fresh namespace of the test cluster,
// nodes of the busybox image with the agent injected from the test's
// agent image; requests are a hundredth of the size (the cluster's one
// node has the host's few CPUs), host network (the cluster has no
// kube-proxy: a server on the host is reached at 127.0.0.1).
func newProvider(t *testing.T, c *testk8s.Cluster, log *slog.Logger) *kubernetes.Provider {
	t.Helper()
	c.ImportAgentImage(t)
	ns := c.Namespace(t)
	p, err := kubernetes.New(kubernetes.Config{
		Kubeconfig: c.Kubeconfig, Namespace: ns,
		NodeImage: testk8s.BusyboxImage, AgentImage: testk8s.AgentImage, ImagePullPolicy: "Never",
		HostNetwork: true, RequestFraction: 0.01, TerminationGrace: time.Second,
		AgentArgs: []string{"--orphan-timeout", "2m"}, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	namespaces.Store(p, ns)
	return p
}

// namespaces holds each provider's namespace, for the pods' logs.
var namespaces sync.Map

// started waits until the node's pod runs (its init container copied
// the agent in and the agent started).
func started(t *testing.T, p node.Provider, ref string) bool {
	t.Helper()
	kp := p.(*kubernetes.Provider)
	node := &node.Node{ID: "x", ProviderRef: ref}
	deadline := time.Now().Add(90 * time.Second)
	var st kubernetes.PodStatus
	for time.Now().Before(deadline) {
		var err error
		st, err = kp.Status(context.Background(), node)
		if err != nil {
			t.Fatalf("status of %s: %v", ref, err)
		}
		if st.Running {
			return true
		}
		if st.Phase == "Failed" || st.Phase == "Succeeded" {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("pod %s: %+v", ref, st)
	if ns, ok := namespaces.Load(p); ok {
		c := testk8s.Shared(t)
		for _, container := range []string{"shoal-agent", "node"} {
			log, err := c.Client.Logs(context.Background(), ns.(string), ref, container)
			t.Logf("container %s's log (%v):\n%s", container, err, log)
		}
	}
	return false
}

func TestConformance(t *testing.T) {
	c := testk8s.Shared(t)
	providertest.Run(t, providertest.Harness{
		New:     func(t *testing.T) node.Provider { return newProvider(t, c, nil) },
		Started: started,
	})
}

// The kubeconfig's token never reaches the provider's log, and a size
// the cluster cannot hold stays Pending with Kubernetes' own reason.
func TestUnfittableSizeShowsKubernetesReasonAndNoTokenIsLogged(t *testing.T) {
	c := testk8s.Shared(t)
	var logs bytes.Buffer
	p := newProvider(t, c, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	node := providertest.NewNode("huge")
	node.VCPUs, node.GPUs = 1, 2
	req := providertest.NewRequest(node)
	ref, err := p.Provision(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	node.ProviderRef = ref
	defer p.Release(context.Background(), node)
	var st kubernetes.PodStatus
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if st, err = p.Status(context.Background(), node); err != nil {
			t.Fatal(err)
		}
		if st.Pending != "" {
			break
		}
	}
	if !strings.Contains(st.Pending, "Insufficient nvidia.com/gpu") || st.Phase != "Pending" {
		t.Fatalf("status %+v, want Pending for Insufficient nvidia.com/gpu", st)
	}
	if alive, err := p.Alive(context.Background(), node); !alive || err != nil {
		t.Fatalf("a Pending pod is a node still provisioning: Alive = %v, %v", alive, err)
	}
	if strings.Contains(logs.String(), c.Token) || strings.Contains(logs.String(), req.JoinToken) {
		t.Fatalf("a credential was logged:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "pod created") {
		t.Fatalf("nothing logged:\n%s", logs.String())
	}
}
