package testk8s

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	os.Exit(Main(m))
}

// busyboxPod is a one-container pod of the busybox image that runs
// script once, on the host's network or the pods' bridge.
func busyboxPod(name, script string, hostNetwork bool) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"restartPolicy": "Never", "hostNetwork": hostNetwork, "terminationGracePeriodSeconds": 0,
			"containers": []any{map[string]any{
				"name": "main", "image": BusyboxImage, "imagePullPolicy": "Never",
				"command": []string{"/bin/sh", "-c", script},
			}},
		},
	}
}

// runToSucceeded creates the pod, waits for it to succeed and returns it
// with its log.
func runToSucceeded(t *testing.T, c *Cluster, ns string, pod map[string]any) (*Pod, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := pod["metadata"].(map[string]any)["name"].(string)
	if err := c.Client.CreatePod(ctx, ns, pod); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	p, err := c.Client.WaitPod(ctx, ns, name, "Succeeded", "Failed")
	if err != nil {
		t.Fatalf("%v", err)
	}
	log, err := c.Client.Logs(ctx, ns, name, "")
	if err != nil {
		t.Fatalf("read the log: %v", err)
	}
	if p.Status.Phase != "Succeeded" {
		t.Fatalf("pod %s: %s, log:\n%s", name, p.Status.Phase, log)
	}
	return p, log
}

func TestHostNetworkPodSucceedsAndItsLogIsRead(t *testing.T) {
	c := Shared(t)
	t.Logf("%s: build %v, start %v, resident memory %d MiB", c, c.Build, c.Setup, c.RSS()>>20)
	ns := c.Namespace(t)
	p, log := runToSucceeded(t, c, ns, busyboxPod("hello", "echo hello from $(hostname); id -u", true))
	if p.Spec.NodeName != c.NodeName {
		t.Errorf("scheduled to %q, want %q", p.Spec.NodeName, c.NodeName)
	}
	if want := "hello from "; !strings.Contains(log, want) || !strings.Contains(log, "\n0\n") {
		t.Errorf("log %q: want %q and uid 0", log, want)
	}
}

func TestBridgedPodReachesTheHost(t *testing.T) {
	c := Shared(t)
	ns := c.Namespace(t)
	// The bridge (and its gateway address) appears with the first pod, so
	// the server listens on every address; pods reach it at PodGateway.
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "pong to %s\n", strings.Split(r.RemoteAddr, ":")[0])
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	url := fmt.Sprintf("http://%s:%d/", c.PodGateway, l.Addr().(*net.TCPAddr).Port)
	p, log := runToSucceeded(t, c, ns, busyboxPod("bridged", "wget -qO- "+url, false))
	_, subnet, _ := net.ParseCIDR(c.PodSubnet)
	if ip := net.ParseIP(p.Status.PodIP); ip == nil || !subnet.Contains(ip) {
		t.Errorf("pod IP %q, want one in %s", p.Status.PodIP, c.PodSubnet)
	}
	if want := "pong to " + p.Status.PodIP; !strings.Contains(log, want) {
		t.Errorf("log %q, want %q", log, want)
	}
}

func TestImportedImageRuns(t *testing.T) {
	c := Shared(t)
	ns := c.Namespace(t)
	bb, err := os.ReadFile(busyboxPath)
	if err != nil {
		t.Fatal(err)
	}
	tarball := filepath.Join(t.TempDir(), "img.tar")
	const ref = "shoal.test/imported:7"
	if err := WriteImage(tarball, ref, ImageConfig{Entrypoint: []string{"/bin/busybox", "cat"}, Cmd: []string{"/greeting"}},
		[]ImageFile{{Path: "/bin/busybox", Mode: 0o755, Data: bb}, {Path: "/greeting", Data: []byte("imported image here\n")}}); err != nil {
		t.Fatal(err)
	}
	c.ImportImage(t, tarball)
	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "imported"},
		"spec": map[string]any{
			"restartPolicy": "Never", "hostNetwork": true, "terminationGracePeriodSeconds": 0,
			"containers": []any{map[string]any{"name": "main", "image": ref, "imagePullPolicy": "Never"}},
		},
	}
	if _, log := runToSucceeded(t, c, ns, pod); log != "imported image here\n" {
		t.Errorf("log %q, want the image's file", log)
	}
}

// The kubeconfig is what code under test takes: its server, CA and token
// reach the API on their own.
func TestKubeconfigReachesTheAPI(t *testing.T) {
	c := Shared(t)
	data, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	field := func(key string) string {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), ": "); ok && k == key {
				return v
			}
		}
		t.Fatalf("kubeconfig has no %s:\n%s", key, data)
		return ""
	}
	ca, err := base64.StdEncoding.DecodeString(field("certificate-authority-data"))
	if err != nil {
		t.Fatal(err)
	}
	client, err := newClient(field("server"), field("token"), ca)
	if err != nil {
		t.Fatal(err)
	}
	var version struct{ GitVersion string }
	if err := client.Do(context.Background(), http.MethodGet, "/version", nil, &version); err != nil {
		t.Fatal(err)
	}
	if version.GitVersion != Version {
		t.Errorf("server version %q, want %q (the build's ldflags)", version.GitVersion, Version)
	}
	// Another token is refused: the API does not let anyone in.
	stranger, _ := newClient(field("server"), "not-a-token", ca)
	if err := stranger.Do(context.Background(), http.MethodGet, "/api/v1/namespaces", nil, nil); err == nil {
		t.Error("a made-up token listed namespaces")
	}
}

func TestPodRunsAsNonRoot(t *testing.T) {
	c := Shared(t)
	ns := c.Namespace(t)
	pod := busyboxPod("nonroot", "id -u; touch /tmp/ok && echo wrote", true)
	pod["spec"].(map[string]any)["securityContext"] = map[string]any{"runAsUser": 65534, "runAsGroup": 65534, "runAsNonRoot": true}
	if _, log := runToSucceeded(t, c, ns, pod); log != "65534\nwrote\n" {
		t.Errorf("log %q, want uid 65534 and a write to /tmp", log)
	}
}
