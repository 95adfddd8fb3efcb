package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testctr"
)

// A cluster with prepull_images: its node pulls the image when it joins,
// before it takes work, so the first job that names it starts without a
// pull (no "pulling" event); `compute show` lists the images, and the
// compute's events say the node pre-pulled them.
func TestPrepullImagesBeforeFirstJob(t *testing.T) {
	t.Parallel()
	env := testctr.Shared(t)
	// An image no node has yet: the base pushed under a name of this run.
	image := fmt.Sprintf("%s/shoal-test/prepull-%d:1", env.Registry.Addr, time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "podman", "--runtime", "runc", "--root", env.Root, "--runroot", env.RunRoot,
		"push", "--tls-verify=false", env.BaseImage, image).CombinedOutput(); err != nil {
		t.Fatalf("push %s: %v: %s", image, err, out)
	}
	s := startServer(t, serverOpts{Env: []string{"SHOAL_AGENT_CONTAINER_HOST=" + env.Host}})
	cluster := filepath.Join(t.TempDir(), "cluster.yml")
	if err := os.WriteFile(cluster, []byte("name: pre\ntype: amlcompute\nsize: Standard_DS3_v2\nmax_instances: 1\nprepull_images:\n  - "+image+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, s.env, "compute", "create", "-f", cluster, "-o", "none")
	if show := mustRun(t, s.env, "compute", "show", "-n", "pre", "-o", "yaml"); !strings.Contains(show, "prepull_images:") || !strings.Contains(show, image) {
		t.Errorf("compute show does not list the prepull image:\n%s", show)
	}
	name := submitJob(t, s, writeJobFile(t, "command: python3 -c 'print(\"prepulled\", 1)'\ncompute: azureml:pre\nenvironment:\n  image: "+image+"\n"))
	j := waitJob(t, s, name, 4*time.Minute, "Completed", "Failed")
	log := jobLog(t, s, name)
	if j.Status != "Completed" || !strings.Contains(log, "prepulled 1") {
		t.Fatalf("%v\nlog:\n%s", j, log)
	}
	events := mustRun(t, s.env, "job", "events", "-n", name, "-o", "json")
	if strings.Contains(events, "pulling "+image) {
		t.Errorf("the first job pulled its image although the node pre-pulled it:\n%s", events)
	}
	cevents := mustRun(t, s.env, "compute", "events", "-n", "pre", "-o", "json")
	for _, want := range []string{"pulls 1 images before it takes work", "pre-pulled 1 of 1 images"} {
		if !strings.Contains(cevents, want) {
			t.Errorf("compute events lack %q:\n%s", want, cevents)
		}
	}
	assertNoContainersOf(t, env, s.nodesDir)
}
