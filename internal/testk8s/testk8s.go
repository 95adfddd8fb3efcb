// Package testk8s is a real Kubernetes cluster for tests, built and
// started by the test command, offline: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and one node (Debian's
// containerd and runc under a kubelet, in a private mount and PID
// namespace so the host is left as it was).
//
// The binaries are built from k8s.io/kubernetes (Version) and etcd in a
// Go module of their own (build/, which the main module never sees, so it
// takes no k8s.io dependency), once per machine: the first test package
// to need them builds them (minutes, through the Go module proxy) under
// a file lock in the cache directory while any other waits, then all
// find them cached by version and recipe. The images are written
// offline: a pause image of a static Go program and Debian's static
// busybox, imported into containerd; pods name them with
// imagePullPolicy Never.
//
// A test package starts one cluster per test process (Shared) and stops
// it in TestMain (Main); each test takes a namespace of its own
// (Cluster.Namespace) and talks to the API with the admin kubeconfig or
// the small REST client (Cluster.Client).
package testk8s

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

var (
	once   sync.Once
	shared *Cluster
	errSet error
)

// Requirements checks what a cluster needs of the machine, skipping the
// test (failing it under SHOAL_TEST_REQUIRE_ALL) without it: root (the
// node's namespaces, mounts and cgroups), containerd and runc, the CNI
// plugins, busybox-static and a cgroup hierarchy.
func Requirements(t testenv.T) {
	t.Helper()
	testenv.Root(t, "runs containerd and a kubelet in namespaces of their own")
	const hint = "apt-get install containerd runc containernetworking-plugins busybox-static"
	testenv.Command(t, "containerd", "containerd (the test cluster's container runtime)", hint)
	testenv.Command(t, "ctr", "containerd's ctr (imports the test images)", hint)
	testenv.Command(t, "runc", "runc (containerd's OCI runtime)", hint)
	testenv.Files(t, "the CNI plugins (the pods' network)", hint, "/usr/lib/cni/bridge", "/usr/lib/cni/host-local", "/usr/lib/cni/loopback")
	testenv.Files(t, "Debian's busybox-static (the test image)", hint, busyboxPath)
	testenv.Require(t, "a cgroup hierarchy (the kubelet's pods)", func() error {
		if len(cgroupMounts()) == 0 {
			return errors.New("nothing mounted under /sys/fs/cgroup")
		}
		return nil
	}, "mount the cgroup file systems")
}

// Shared returns the test process's cluster, starting it on first use
// (building the binaries first if this machine has none). Without what
// Requirements checks the test skips (fails under
// SHOAL_TEST_REQUIRE_ALL). Call Main from TestMain to stop it.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	Requirements(t)
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		shared, errSet = Start(ctx)
	})
	if errSet != nil {
		t.Fatalf("test cluster: %v", errSet)
	}
	return shared
}

// Main runs a test package's tests and then stops the shared cluster;
// call it from TestMain: os.Exit(testk8s.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	StopShared()
	return code
}

// StopShared stops the shared cluster, if one was started: for a
// TestMain that runs its tests through another harness's Main.
func StopShared() {
	if shared != nil {
		shared.Close()
		shared = nil
	}
}

// ImportImage loads an image archive (WriteImage writes one) into the
// node's containerd, failing the test if it cannot.
func (c *Cluster) ImportImage(t testing.TB, tarball string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.LoadImage(ctx, tarball); err != nil {
		t.Fatalf("import %s: %v", tarball, err)
	}
}

// nonName is what a namespace name cannot hold.
var nonName = regexp.MustCompile(`[^a-z0-9-]+`)

// Namespace creates a namespace for the test, named after it, and waits
// for its default ServiceAccount (pods are refused until it exists); the
// namespace is deleted, with everything in it, at the test's end.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	b := make([]byte, 3)
	rand.Read(b)
	base := strings.Trim(nonName.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 50 {
		base = strings.TrimRight(base[:50], "-")
	}
	name := base + "-" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	body := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}
	if err := c.Client.Do(ctx, http.MethodPost, "/api/v1/namespaces", body, nil); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Client.Do(ctx, http.MethodDelete, "/api/v1/namespaces/"+name, nil, nil); err != nil && !IsNotFound(err) {
			t.Errorf("delete namespace %s: %v", name, err)
		}
	})
	if err := waitFor(ctx, nil, "namespace "+name+"'s default ServiceAccount", func() error {
		return c.Client.Do(ctx, http.MethodGet, "/api/v1/namespaces/"+name+"/serviceaccounts/default", nil, nil)
	}); err != nil {
		t.Fatalf("%v", err)
	}
	return name
}

// String names the cluster for logs.
func (c *Cluster) String() string {
	return fmt.Sprintf("test cluster %s at %s (node %s, pods %s)", Version, c.Server, c.NodeName, c.PodSubnet)
}

// keepDir says whether the scratch dir outlives the cluster.
func keepDir() bool { return os.Getenv(KeepVar) != "" }
