// Command providers compares Shoal's providers side by side with real
// agents: the time from a node's provisioning to its agent joining
// (idle), cold (the ssh provider copies the shoal binary to the host
// first) and warm, and the latency from submitting a job to its process
// running on a warm idle node. The ssh provider's hosts are real OpenSSH
// servers in network namespaces on this machine (internal/testhosts), and
// the slurm provider's partition a real slurmctld and slurmd
// (internal/testslurm), so it needs root. Run it with bench/providers.sh.
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

	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testhosts"
	"github.com/shoal-ml/shoal/internal/testslurm"
	"github.com/shoal-ml/shoal/server/app"
)

// verbose prints where provisioning time goes.
var verbose *bool

func main() {
	agentBin := flag.String("agent", "", "path of the shoal binary (started as `shoal agent`, copied to the ssh hosts) (required)")
	rounds := flag.Int("rounds", 5, "provisionings per provider")
	jobs := flag.Int("jobs", 100, "jobs submitted one after another on a warm node, per provider")
	verbose = flag.Bool("v", false, "print where each provisioning's time goes")
	flag.Parse()
	if *agentBin == "" {
		log.Fatal("--agent is required")
	}
	b := &testhosts.Program{}
	defer b.Done()
	pool := testhosts.New(b, 1)
	slurm := testslurm.New(b, 16, 64000)
	dir := b.TempDir()
	cfg := filepath.Join(dir, "server.yml")
	os.WriteFile(cfg, []byte("kill_grace: 1s\nlocations:\n  - name: local\n"+pool.LocationYAML("lab", 64)+
		slurm.LocationYAML("hpc", filepath.Join(dir, "pilots"))), 0o600)
	ctx := context.Background()
	m, err := app.Start(ctx, app.Options{Listen: pool.BridgeAddr + ":0", DataDir: filepath.Join(dir, "data"), NodesDir: benchNodesDir(dir), ConfigPath: cfg,
		ClientConfigPath: "-", AgentExecutable: *agentBin})
	if err != nil {
		b.Fatalf("%v", err)
	}
	b.Cleanup(func() { m.Close() })
	c := client.NewClient(m.URL(), m.AdminToken)
	fmt.Printf("%-8s %-22s %-22s %s\n", "provider", "provision→idle, cold", "provision→idle, warm", "submit→running on a warm node")
	for _, loc := range []string{"local", "lab", "hpc"} {
		var idle []time.Duration
		for i := 0; i < *rounds; i++ {
			name := fmt.Sprintf("b%d-%s", i, loc)
			idle = append(idle, provisionToIdle(ctx, b, c, name, loc))
			if i < *rounds-1 {
				drop(ctx, b, c, name)
			}
		}
		lat := dispatch(ctx, b, c, fmt.Sprintf("b%d-%s", *rounds-1, loc), *jobs)
		provider := map[string]string{"local": "local", "lab": "ssh", "hpc": "slurm"}[loc]
		fmt.Printf("%-8s %-22s %-22s p50 %.1f ms, p99 %.1f ms (%d jobs)\n", provider, idle[0].Round(time.Millisecond),
			median(idle[1:]).Round(time.Millisecond).String()+fmt.Sprintf(" (median of %d)", len(idle)-1), ms(pct(lat, 0.5)), ms(pct(lat, 0.99)), len(lat))
		drop(ctx, b, c, fmt.Sprintf("b%d-%s", *rounds-1, loc))
	}
}

// provisionToIdle creates a cluster with one node kept and times its node
// from creation to idle.
func provisionToIdle(ctx context.Context, b *testhosts.Program, c *client.Client, name, loc string) time.Duration {
	doc, _ := json.Marshal(map[string]any{"name": name, "type": "amlcompute", "location": loc, "min_instances": 1, "max_instances": 1, "idle_time_before_scale_down": 600})
	start := time.Now()
	if _, _, err := c.ApplyCompute(ctx, "default", name, doc, ""); err != nil {
		b.Fatalf("%v", err)
	}
	for time.Since(start) < 2*time.Minute {
		nodes, err := c.ListNodes(ctx, "default", name)
		if err != nil {
			b.Fatalf("%v", err)
		}
		if len(nodes) == 1 && nodes[0].State == node.NodeIdle {
			if *verbose && nodes[0].ReadyOn != nil {
				fmt.Fprintf(os.Stderr, "%s: node created %s after the cluster, joined %s after that\n", name,
					nodes[0].CreatedOn.Sub(start).Round(time.Millisecond), nodes[0].ReadyOn.Sub(nodes[0].CreatedOn).Round(time.Millisecond))
			}
			return time.Since(start)
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.Fatalf("cluster %s: no idle node after 2 minutes", name)
	return 0
}

// dispatch submits jobs one after another to a cluster's warm node and
// returns each one's submit → process running time.
func dispatch(ctx context.Context, b *testhosts.Program, c *client.Client, cluster string, n int) []time.Duration {
	var out []time.Duration
	for i := 0; i < n; i++ {
		doc, _ := json.Marshal(map[string]any{"command": "true", "compute": cluster})
		start := time.Now()
		j, _, err := c.SubmitJob(ctx, "default", doc, "")
		if err != nil {
			b.Fatalf("%v", err)
		}
		for {
			j, err = c.GetJob(ctx, "default", j.Name)
			if err != nil {
				b.Fatalf("%v", err)
			}
			if job.JobTerminal(j.Status) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		atts, err := c.ListAttempts(ctx, "default", j.Name)
		if err != nil || j.Status != job.JobCompleted || len(atts) != 1 || atts[0].Ranks[0].StartTime == nil {
			b.Fatalf("job %s: %s %v", j.Name, j.Status, err)
		}
		out = append(out, atts[0].Ranks[0].StartTime.Sub(start))
	}
	return out
}

// drop deletes a cluster and waits until it is gone.
func drop(ctx context.Context, b *testhosts.Program, c *client.Client, name string) {
	if _, err := c.DeleteCompute(ctx, "default", name, ""); err != nil {
		b.Fatalf("%v", err)
	}
	for start := time.Now(); time.Since(start) < time.Minute; time.Sleep(20 * time.Millisecond) {
		if _, err := c.GetCompute(ctx, "default", name); core.ErrorCode(err) == core.ENOTFOUND {
			return
		}
	}
	b.Fatalf("cluster %s was not deleted", name)
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return pct(d, 0.5)
}

func pct(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchNodesDir is where the bench's nodes keep their work dirs: beside
// the data dir, in the bench's folder, which is opened (0711) so that the
// accounts work runs as (the server running as root) reach their folders.
func benchNodesDir(dir string) string {
	_ = os.Chmod(dir, 0o711)
	return filepath.Join(dir, "nodes")
}
