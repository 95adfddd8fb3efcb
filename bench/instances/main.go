// Command instances measures a compute instance's operations with real
// agent processes on this host, side by side in one run: today's
// host-process instance, and an instance in a container of the
// test-built instance image (already in the engine: a cached image).
// For each: create → Running, stop → Stopped and start → Running (each
// until the server reports it, as `shoal compute start` waits), and
// Running → Jupyter answering through the server's app proxy after each
// start. The targets: start → Running within 2 s and Jupyter within 5 s
// of Running (medians). Run it with bench/instances.sh.
//
// The container half needs what the container tests need (root, podman,
// runc, mmdebstrap, docker-registry; internal/testctr sets up a private
// podman and builds the image); --containers=false measures the host
// processes alone.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/internal/testctr"
	"github.com/shoal-ml/shoal/server/app"
)

// figures are one kind of instance's measurements.
type figures struct {
	isolation              string
	create                 time.Duration
	stops, starts, jupyter []time.Duration
}

func main() {
	agentBin := flag.String("agent", "", "path of the shoal binary started as `shoal agent` (required)")
	rounds := flag.Int("rounds", 5, "stop/start rounds")
	containers := flag.Bool("containers", true, "measure an instance in a container beside the host-process one")
	flag.Parse()
	if *agentBin == "" {
		log.Fatal("--agent is required")
	}
	image := ""
	if *containers {
		env, err := testctr.Start()
		if err != nil {
			log.Fatalf("container set-up (--containers=false measures host processes alone): %v", err)
		}
		defer env.Close()
		if image, err = env.BuildInstanceImage(); err != nil {
			log.Fatalf("instance image: %v", err)
		}
		// The agents the local provider starts inherit the server's
		// environment: they use the set-up's engine.
		os.Setenv("SHOAL_AGENT_CONTAINER_HOST", env.Host)
	}
	host := measure(*agentBin, "", *rounds)
	var boxed *figures
	if image != "" {
		boxed = measure(*agentBin, image, *rounds)
	}
	row := func(what string, f func(*figures) string) {
		line := fmt.Sprintf("  %-36s %14s", what, f(host))
		if boxed != nil {
			line += fmt.Sprintf("  %14s", f(boxed))
		}
		fmt.Println(line)
	}
	fmt.Printf("compute instance operations, %d stop/start rounds (medians):\n", *rounds)
	row("", func(f *figures) string { return f.isolation })
	row("create → Running", func(f *figures) string { return ms(f.create) })
	row("stop → Stopped", func(f *figures) string { return ms(median(f.stops)) })
	row("start → Running (target ≤ 2 s)", func(f *figures) string { return ms(median(f.starts)) })
	row("Running → Jupyter answers (≤ 5 s)", func(f *figures) string { return ms(median(f.jupyter)) })
	for _, f := range []*figures{host, boxed} {
		if f != nil {
			fmt.Printf("  %s: stops %s; starts %s; Jupyter %s\n", f.isolation, list(f.stops), list(f.starts), list(f.jupyter))
		}
	}
}

// measure starts a server whose local location runs instances in
// containers of image ("" for host processes) and measures one instance.
func measure(agentBin, image string, rounds int) *figures {
	dir, err := os.MkdirTemp("", "shoal-bench-ci-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "server.yml")
	doc := "kill_grace: 1s\n"
	if image != "" {
		doc += "locations:\n  - name: local\n    instance_image: " + image + "\n"
	}
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	m, err := app.Start(ctx, app.Options{Listen: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"), NodesDir: benchNodesDir(dir),
		ConfigPath: cfg, ClientConfigPath: "-", AgentExecutable: agentBin})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	b := &bench{c: client.NewClient(m.URL(), m.AdminToken), token: m.AdminToken}
	spec, _ := json.Marshal(map[string]any{"name": "bench-ci", "type": "computeinstance", "size": "Standard_DS3_v2"})
	var f figures
	t0 := time.Now()
	if _, _, err := b.c.ApplyCompute(ctx, "default", "bench-ci", spec, ""); err != nil {
		log.Fatal(err)
	}
	f.isolation = b.wait(ctx, compute.InstanceRunning).Isolation
	f.create = time.Since(t0)
	f.jupyter = append(f.jupyter, b.jupyter(ctx))
	for range rounds {
		t := time.Now()
		b.op(ctx, "stop")
		b.wait(ctx, compute.InstanceStopped)
		f.stops = append(f.stops, time.Since(t))
		t = time.Now()
		b.op(ctx, "start")
		b.wait(ctx, compute.InstanceRunning)
		f.starts = append(f.starts, time.Since(t))
		f.jupyter = append(f.jupyter, b.jupyter(ctx))
	}
	b.op(ctx, "stop")
	b.wait(ctx, compute.InstanceStopped)
	b.c.DeleteCompute(ctx, "default", "bench-ci", "")
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if l, _ := b.c.ListComputes(ctx, "default", ""); len(l) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return &f
}

// bench is one server's client and the token its instance answers to
// (the admin created it: the admin is its user).
type bench struct {
	c     *client.Client
	token string
}

func (b *bench) op(ctx context.Context, name string) {
	if _, err := b.c.InstanceOperation(ctx, "default", "bench-ci", name, ""); err != nil {
		log.Fatal(err)
	}
}

// wait polls every 5 ms until the instance is in state with no operation
// under way.
func (b *bench) wait(ctx context.Context, state string) *compute.Compute {
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		comp, err := b.c.GetCompute(ctx, "default", "bench-ci")
		if err != nil {
			log.Fatal(err)
		}
		if comp.State == state && (comp.LastOperation == nil || comp.LastOperation.OperationStatus != compute.OperationInProgress) {
			return comp
		}
		time.Sleep(5 * time.Millisecond)
	}
	log.Fatalf("instance never %s", state)
	return nil
}

// jupyter is the time from now (the instance just reported Running) until
// its Jupyter answers its status API through the server's app proxy.
func (b *bench) jupyter(ctx context.Context) time.Duration {
	start := time.Now()
	deadline := start.Add(2 * time.Minute)
	hc := &http.Client{Timeout: 5 * time.Second}
	for time.Now().Before(deadline) {
		comp, err := b.c.GetCompute(ctx, "default", "bench-ci")
		if err != nil {
			log.Fatal(err)
		}
		for _, a := range comp.Applications {
			if a.DisplayName != compute.JupyterApplication || a.EndpointURI == "" {
				continue
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", strings.TrimSuffix(a.EndpointURI, "/")+"/api/status", nil)
			req.Header.Set("Authorization", "Bearer "+b.token)
			if resp, err := hc.Do(req); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return time.Since(start)
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	log.Fatal("Jupyter never answered through the proxy (is jupyter-notebook installed on the host?)")
	return 0
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }

func list(d []time.Duration) string {
	var out []string
	for _, x := range d {
		out = append(out, x.Round(time.Millisecond).String())
	}
	return strings.Join(out, ", ")
}

// benchNodesDir is where the bench's nodes keep their work dirs: beside
// the data dir, in the bench's folder, which is opened (0711) so that the
// accounts work runs as (the server running as root) reach their folders.
func benchNodesDir(dir string) string {
	_ = os.Chmod(dir, 0o711)
	return filepath.Join(dir, "nodes")
}
