package e2e_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testctr"
)

// hostPodman runs the host's podman CLI on its default store (no
// --root: /var/lib/containers/storage as root), as an operator does.
func hostPodman(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "podman", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("podman %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The nodes of a host with podman and no system service share the host's
// image store: an image made there with the podman CLI (here `podman
// import`, as `podman build` would) runs on either node of a two-node
// job; and an image both nodes need is pulled from the registry once for
// the two. Each node had a store of its own: the host's image was not
// found, and every node pulled its own copy.
func TestNodesShareTheHostsImages(t *testing.T) {
	env := testctr.Shared(t)
	tarball, _, err := testctr.BaseTarball()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	rand.Read(b)
	tok := hex.EncodeToString(b)
	local := "localhost/shoal-e2e/hoststore-" + tok + ":1"
	hostPodman(t, "import", tarball, local)
	pushed := env.Registry.Addr + "/shoal-e2e/once-" + tok + ":1"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := env.PodmanCLI(ctx, "push", "--tls-verify=false", env.BaseImage, pushed); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The host's store is the operator's: what the test put there goes.
		_ = exec.Command("podman", "rmi", "--force", local, pushed).Run()
	})

	// No engine named: the nodes find no Docker daemon or podman system
	// service and start podman services of their own, on the host's store.
	s := startServer(t, serverOpts{Config: fastJobsConfig, Env: []string{"SHOAL_AGENT_INSECURE_REGISTRIES=" + env.Registry.Addr}})
	const cluster = "host-store"
	createCluster(t, s, cluster, "--size", "Standard_DS3_v2", "--min-instances", "2", "--max-instances", "2", "--idle-time-before-scale-down", "120")
	for _, c := range []struct{ what, image string }{
		{"an image of the host's store", local},
		{"an image pulled for both nodes", pushed},
	} {
		dir := writeFiles(t, map[string]string{
			"job.yml": "command: python3 -c 'print(\"ran in the image\")'\ncompute: azureml:" + cluster + "\n" +
				"environment:\n  image: " + c.image + "\nresources:\n  instance_count: 2\n",
		})
		name := submitJob(t, s, filepath.Join(dir, "job.yml"))
		j := waitJob(t, s, name, 4*time.Minute, "Completed", "Failed")
		logs := []string{jobLog(t, s, name), jobLog(t, s, name, "--rank", "1")}
		if j.Status != "Completed" {
			t.Fatalf("%s: %v\nrank 0:\n%s\nrank 1:\n%s", c.what, j, logs[0], logs[1])
		}
		a := listAttempts(t, s, name)
		if len(a) != 1 || len(a[0].Ranks) != 2 || a[0].Ranks[0].NodeID == a[0].Ranks[1].NodeID {
			t.Fatalf("%s: attempts %+v; want one with its two ranks on two nodes", c.what, a)
		}
		for rank, log := range logs {
			if !strings.Contains(log, "in a container of "+c.image) || !strings.Contains(log, "ran in the image") {
				t.Errorf("%s: rank %d's log:\n%s", c.what, rank, log)
			}
		}
	}
	// One pull: the image's manifest asked for once (a pull by node
	// asks for it once by its tag).
	manifest := `"GET /v2/shoal-e2e/once-` + tok + `/manifests/1 `
	if n := strings.Count(env.Registry.Log(), manifest); n != 1 {
		t.Errorf("the registry was asked %d times for %s's manifest, want one pull for the two nodes", n, pushed)
	}
}
