// Command containers measures what running a job in a container costs,
// side by side in one run on one machine: submit → process start on a
// warm node for a bare job, for a job in a container whose image the
// node has, and `podman run --rm IMAGE true` alone on the same engine;
// then a first pull through Shoal (submit → process start, the image
// absent) against `podman pull` of the same image. The target: Shoal's
// containerized start within 1.2× of podman's own warm start (medians).
//
// It needs what the container tests need (root, podman, runc,
// mmdebstrap, docker-registry): the base image, a private registry and a
// private podman service come from internal/testctr. Run it through
// bench/containers.sh.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/internal/testctr"
	"github.com/shoal-ml/shoal/server/app"
)

func main() {
	agentBin := flag.String("agent", "", "path of the shoal binary started as `shoal agent` (required)")
	n := flag.Int("jobs", 30, "jobs of each kind on the warm node (and podman runs)")
	pulls := flag.Int("pulls", 3, "first pulls measured (through Shoal and podman each)")
	flag.Parse()
	if *agentBin == "" {
		log.Fatal("--agent is required")
	}
	ctx := context.Background()
	env, err := testctr.Start()
	if err != nil {
		log.Fatalf("container set-up: %v", err)
	}
	defer env.Close()
	fmt.Printf("set-up: %.1f s (base image build %.1f s)\n", env.Setup.Seconds(), env.BaseBuild.Seconds())
	image := env.Registry.Addr + "/" + testctr.PushedBase
	// The set-up keeps the base under a local name too, which would keep
	// its layers when the registry's tag is removed: a first pull would
	// then fetch nothing.
	if err := env.PodmanCLI(ctx, "rmi", env.BaseImage); err != nil {
		log.Fatal(err)
	}

	// The agents the local provider starts inherit the server's
	// environment: they use the set-up's engine and reach its registry
	// over HTTP.
	os.Setenv("SHOAL_AGENT_CONTAINER_HOST", env.Host)
	os.Setenv("SHOAL_AGENT_INSECURE_REGISTRIES", env.Registry.Addr)
	dir, err := os.MkdirTemp("", "shoal-bench-ctr-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	_ = os.Chmod(dir, 0o711)
	cfgPath := filepath.Join(dir, "server.yml")
	os.WriteFile(cfgPath, []byte("kill_grace: 1s\n"), 0o600)
	m, err := app.Start(ctx, app.Options{Listen: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"), NodesDir: filepath.Join(dir, "nodes"),
		ConfigPath: cfgPath, ClientConfigPath: "-", AgentExecutable: *agentBin})
	if err != nil {
		log.Fatal(err)
	}
	c := client.NewClient(m.URL(), m.AdminToken)
	defer func() {
		c.DeleteCompute(ctx, "default", "bench-ctr", "")
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if l, _ := c.ListComputes(ctx, "default", ""); len(l) == 0 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		m.Close()
	}()
	warmNode(ctx, c)

	// First pulls: the image absent from the engine each time.
	var shoalPull, podmanPull []time.Duration
	for i := 0; i < *pulls; i++ {
		removeImage(ctx, env, image)
		shoalPull = append(shoalPull, startDelay(ctx, c, image))
		removeImage(ctx, env, image)
		start := time.Now()
		if err := env.PodmanCLI(ctx, "pull", "--tls-verify=false", "-q", image); err != nil {
			log.Fatal(err)
		}
		podmanPull = append(podmanPull, time.Since(start))
	}

	// Warm: the image is there.
	var bare, ctr, run []time.Duration
	for i := 0; i < *n; i++ {
		bare = append(bare, startDelay(ctx, c, ""))
		ctr = append(ctr, startDelay(ctx, c, image))
		start := time.Now()
		if err := env.PodmanCLI(ctx, "run", "--rm", "--network", "host", image, "true"); err != nil {
			log.Fatal(err)
		}
		run = append(run, time.Since(start))
	}
	fmt.Printf("submit→process start on a warm node, %d each (median, p90):\n", *n)
	fmt.Printf("  bare job:                      %7.1f ms  %7.1f ms\n", ms(q(bare, .5)), ms(q(bare, .9)))
	fmt.Printf("  job in a container (cached):   %7.1f ms  %7.1f ms\n", ms(q(ctr, .5)), ms(q(ctr, .9)))
	fmt.Printf("  podman run --rm IMAGE true:    %7.1f ms  %7.1f ms\n", ms(q(run, .5)), ms(q(run, .9)))
	fmt.Printf("  container job / podman run:    %.2f× (target ≤ 1.2×)\n", float64(q(ctr, .5))/float64(q(run, .5)))
	fmt.Printf("first pull of %s, %d each (median):\n", image, *pulls)
	fmt.Printf("  through Shoal (submit→start):  %7.1f ms\n", ms(q(shoalPull, .5)))
	fmt.Printf("  podman pull:                   %7.1f ms\n", ms(q(podmanPull, .5)))
}

// warmNode makes a one-node cluster and waits for its node.
func warmNode(ctx context.Context, c *client.Client) {
	doc, _ := json.Marshal(map[string]any{"name": "bench-ctr", "min_instances": 1, "max_instances": 1, "idle_time_before_scale_down": 600})
	if _, _, err := c.ApplyCompute(ctx, "default", "bench-ctr", doc, ""); err != nil {
		log.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		cp, err := c.GetCompute(ctx, "default", "bench-ctr")
		if err == nil && cp.NodeStateCounts.IdleNodeCount == 1 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	log.Fatal("bench-ctr: the node was not ready within 60 s")
}

// startDelay submits a job (in a container of image, or bare when image
// is "") and returns the time from the submit call to the start of its
// process as the node recorded it.
func startDelay(ctx context.Context, c *client.Client, image string) time.Duration {
	spec := map[string]any{"command": "true", "compute": "bench-ctr"}
	if image != "" {
		spec["environment"] = map[string]any{"image": image}
	}
	doc, _ := json.Marshal(spec)
	start := time.Now()
	j, _, err := c.SubmitJob(ctx, "default", doc, "")
	if err != nil {
		log.Fatal(err)
	}
	for {
		j, err = c.GetJob(ctx, "default", j.Name)
		if err != nil {
			log.Fatal(err)
		}
		if job.JobTerminal(j.Status) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if j.Status != job.JobCompleted {
		log.Fatalf("job %s ended %s: %s", j.Name, j.Status, j.Error)
	}
	atts, err := c.ListAttempts(ctx, "default", j.Name)
	if err != nil || len(atts) != 1 || atts[0].Ranks[0].StartTime == nil {
		log.Fatalf("attempts of %s: %v %v", j.Name, atts, err)
	}
	return atts[0].Ranks[0].StartTime.Sub(start)
}

// removeImage removes an image from the engine (absent is fine).
func removeImage(ctx context.Context, env *testctr.Env, image string) {
	_ = env.PodmanCLI(ctx, "rmi", "--force", image)
	_ = exec.Command("sync").Run()
}

func q(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
