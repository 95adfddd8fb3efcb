// Command instances measures a compute instance's operations with real
// agent processes on this host: create → Running, stop → Stopped and
// start → Running (each until the server reports it, as `shoal compute
// start` waits), with and without the Jupyter notebook that starts with
// every instance when the host has it. Run it with bench/instances.sh.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/app"
	"github.com/shoal-ml/shoal/client"
)

func main() {
	agentBin := flag.String("agent", "", "path of the shoal binary started as `shoal agent` (required)")
	rounds := flag.Int("rounds", 5, "stop/start rounds")
	flag.Parse()
	if *agentBin == "" {
		log.Fatal("--agent is required")
	}
	dir, err := os.MkdirTemp("", "shoal-bench-ci-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	m, err := app.Start(ctx, app.Options{Listen: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"), NodesDir: benchNodesDir(dir), ClientConfigPath: "-", AgentExecutable: *agentBin})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	c := client.NewClient(m.URL(), m.AdminToken)
	doc, _ := json.Marshal(map[string]any{"name": "bench-ci", "type": "computeinstance", "size": "Standard_DS3_v2"})
	t0 := time.Now()
	if _, _, err := c.ApplyCompute(ctx, "default", "bench-ci", doc, ""); err != nil {
		log.Fatal(err)
	}
	wait(ctx, c, shoal.InstanceRunning)
	create := time.Since(t0)
	var stops, starts []time.Duration
	for range *rounds {
		t := time.Now()
		op(ctx, c, "stop")
		wait(ctx, c, shoal.InstanceStopped)
		stops = append(stops, time.Since(t))
		t = time.Now()
		op(ctx, c, "start")
		wait(ctx, c, shoal.InstanceRunning)
		starts = append(starts, time.Since(t))
	}
	ready := time.Now()
	waitApps(ctx, c)
	fmt.Printf("create → Running: %s\n", create.Round(time.Millisecond))
	fmt.Printf("stop → Stopped: median %s of %d (%s)\n", median(stops), len(stops), list(stops))
	fmt.Printf("start → Running: median %s of %d (%s)\n", median(starts), len(starts), list(starts))
	fmt.Printf("Running → every application ready (Jupyter when installed): %s\n", time.Since(ready).Round(time.Millisecond))
	op(ctx, c, "stop")
	wait(ctx, c, shoal.InstanceStopped)
	c.DeleteCompute(ctx, "default", "bench-ci", "")
	time.Sleep(time.Second)
}

func op(ctx context.Context, c *client.Client, name string) {
	if _, err := c.InstanceOperation(ctx, "default", "bench-ci", name, ""); err != nil {
		log.Fatal(err)
	}
}

// wait polls every 5 ms until the instance is in state with no operation
// under way.
func wait(ctx context.Context, c *client.Client, state string) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		comp, err := c.GetCompute(ctx, "default", "bench-ci")
		if err != nil {
			log.Fatal(err)
		}
		if comp.State == state && (comp.LastOperation == nil || comp.LastOperation.OperationStatus != shoal.OperationInProgress) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	log.Fatalf("instance never %s", state)
}

func waitApps(ctx context.Context, c *client.Client) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		comp, err := c.GetCompute(ctx, "default", "bench-ci")
		if err != nil {
			log.Fatal(err)
		}
		ready := true
		for _, a := range comp.Applications {
			ready = ready && a.Ready
		}
		if ready {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	log.Fatal("applications never ready")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2].Round(time.Millisecond)
}

func list(d []time.Duration) string {
	out := ""
	for i, x := range d {
		if i > 0 {
			out += ", "
		}
		out += x.Round(time.Millisecond).String()
	}
	return out
}

// benchNodesDir is where the bench's nodes keep their work dirs: beside
// the data dir, in the bench's folder, which is opened (0711) so that the
// accounts work runs as (the server running as root) reach their folders.
func benchNodesDir(dir string) string {
	_ = os.Chmod(dir, 0o711)
	return filepath.Join(dir, "nodes")
}
