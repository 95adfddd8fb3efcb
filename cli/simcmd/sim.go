// Package simcmd is `shoal sim`, the scheduling simulator's command;
// named so that the sim package it runs keeps its name.
package simcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/sim"
)

// NewCommand is `shoal sim`: replay a job trace through Shoal's own
// scheduler and autoscaler to compare idle policies.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	var trace, format, cluster, policy, sweep, plot, waits string
	var gpus int
	var delay time.Duration
	var waitCost float64
	var fromHistory bool
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Replay a job trace through Shoal's scheduler and autoscaler: cost against queue wait per idle policy",
		Long: `Replays a trace on one cluster with a simulated clock, through the same scheduler and
autoscaler the server runs, and reports node-hours (from the start of provisioning to
release), idle node-hours, cost, jobs that waited and their wait, and scale-ups and -downs.

Traces: the Alibaba GPU 2023 CSV (openb_pod_list_default.csv), a CSV of
submit_time,duration,instance_count (seconds), or --from-history: the server's own jobs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			jobs, err := loadTrace(cmd.Context(), g, trace, format, gpus, fromHistory)
			if err != nil {
				return err
			}
			base, err := simCluster(cluster)
			if err != nil {
				return err
			}
			base.ProvisionDelay = delay
			if cmd.Flags().Changed("wait-cost-per-hour") {
				base.WaitCostPerHour = waitCost
			}
			var configs []sim.Config
			if sweep != "" {
				for _, p := range strings.Split(sweep, ",") {
					c, err := withPolicy(base, strings.TrimSpace(p))
					if err != nil {
						return fmt.Errorf("--sweep: %w", err)
					}
					configs = append(configs, c)
				}
			} else {
				p := policy
				if p == "" {
					p = base.Policy()
				}
				c, err := withPolicy(base, p)
				if err != nil {
					return fmt.Errorf("--idle-policy: %w", err)
				}
				configs = append(configs, c)
			}
			if cluster == "" {
				fmt.Fprintln(g.Stderr, "note: no --cluster given, so nodes have no price and every cost is 0; pass --cluster with a cluster YAML (its size and tier give the price per node-hour)")
			}
			var results []*sim.Result
			if actual, ok := sim.Actual(jobs); ok {
				// What really happened, first: replayed waits assume
				// --provision-delay for every new node, which the local
				// provider does not take.
				results = append(results, actual)
				fmt.Fprintf(g.Stderr, "note: the row \"history\" is what the jobs really waited (submission to start); the others replay the trace with a %s provision delay per new node; cost and idle node-hours are not in a job history (see shoal cost)\n", delay)
			}
			var series *sim.Result
			for i, c := range configs {
				c.Series = plot != "" && (i == 0 || c.Adaptive)
				r, err := sim.Run(jobs, c)
				if err != nil {
					return err
				}
				results = append(results, r)
				if c.Series {
					series = r
				}
			}
			if plot != "" {
				if err := writeFile(plot, func(w io.Writer) error { return sim.Plot(w, replayed(results), series) }); err != nil {
					return fmt.Errorf("--plot: %w", err)
				}
				fmt.Fprintf(g.Stderr, "plot written to %s\n", plot)
			}
			if waits != "" {
				if err := writeFile(waits, func(w io.Writer) error { return sim.WriteWaits(w, jobs, results) }); err != nil {
					return fmt.Errorf("--waits: %w", err)
				}
				fmt.Fprintf(g.Stderr, "the wait of each of %d jobs written to %s\n", len(jobs), waits)
			}
			for _, r := range results {
				r.Round()
			}
			return g.Render(results, []string{"policy", "jobs", "node_hours", "busy_node_hours", "idle_node_hours", "cost", "jobs_waited", "wait_mean_s", "wait_p50_s", "wait_p95_s", "wait_max_s", "scale_ups", "scale_downs"})
		},
	}
	f := cmd.Flags()
	f.StringVar(&trace, "trace", "", "trace file: the Alibaba GPU 2023 CSV or submit_time,duration,instance_count")
	f.StringVar(&format, "format", "auto", "trace format: auto, alibaba, simple or history (a `shoal job export` file)")
	f.IntVar(&gpus, "gpus", -1, "Alibaba trace: keep only the jobs asking for this many GPUs (-1: all)")
	f.BoolVar(&fromHistory, "from-history", false, "replay the server's own job history (submission times and run times) instead of a file")
	f.StringVar(&cluster, "cluster", "", "cluster YAML (size, tier, min_instances, max_instances, idle_time_before_scale_down); default min 0, unbounded max")
	f.DurationVar(&delay, "provision-delay", 3*time.Minute, "how long a new node takes to be ready")
	f.StringVar(&policy, "idle-policy", "", "fixed:120s or adaptive (default: the cluster's)")
	f.StringVar(&sweep, "sweep", "", "compare policies: fixed timeouts and adaptive, e.g. 0s,60s,120s,300s,600s,1800s,adaptive")
	f.Float64Var(&waitCost, "wait-cost-per-hour", 0, "adaptive: what an hour of a waiting job is worth (default 1.5 × the node's price)")
	f.StringVar(&plot, "plot", "", "write an SVG: cost against mean wait per policy, and node count over time")
	f.StringVar(&waits, "waits", "", "write the wait of every job (submit to start, seconds) as CSV: a row per job, a column per policy")
	return cmd
}

// replayed leaves out the history's own row, which has no cost to plot.
func replayed(results []*sim.Result) []*sim.Result {
	var out []*sim.Result
	for _, r := range results {
		if r.Policy != "history" {
			out = append(out, r)
		}
	}
	return out
}

// loadTrace reads the jobs to replay.
func loadTrace(ctx context.Context, g *cmdutil.Globals, path, format string, gpus int, fromHistory bool) ([]sim.Job, error) {
	if fromHistory {
		if path != "" {
			return nil, fmt.Errorf("give --trace or --from-history, not both")
		}
		c, ws, err := g.Client()
		if err != nil {
			return nil, err
		}
		list, err := c.ListJobs(ctx, ws, nil, "", 0)
		if err != nil {
			return nil, err
		}
		return sim.FromHistory(list), nil
	}
	if path == "" {
		return nil, fmt.Errorf("--trace FILE or --from-history is required")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	defer f.Close()
	if format == "auto" {
		head := make([]byte, 512)
		n, _ := io.ReadFull(f, head)
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		format = "simple"
		switch h := strings.TrimSpace(string(head[:n])); {
		case strings.Contains(h, "num_gpu"):
			format = "alibaba"
		case strings.HasPrefix(h, "["):
			format = "history"
		}
	}
	switch format {
	case "alibaba":
		return sim.ReadAlibaba(f, sim.Filter{GPUs: gpus})
	case "simple":
		return sim.ReadSimple(f)
	case "history":
		var jobs []*job.Job
		if err := json.NewDecoder(f).Decode(&jobs); err != nil {
			return nil, fmt.Errorf("--trace %s: not a `shoal job export` file: %w", path, err)
		}
		return sim.FromHistory(jobs), nil
	}
	return nil, fmt.Errorf("--format %q: want auto, alibaba, simple or history", format)
}

// simCluster reads the cluster YAML into a replay config (with the
// catalog's price for its size and tier).
func simCluster(path string) (sim.Config, error) {
	c := sim.Config{IdleTimeBeforeScaleDown: 120 * time.Second}
	if path == "" {
		return c, nil
	}
	doc, err := cmdutil.ReadYAMLDocument(path)
	if err != nil {
		return c, err
	}
	raw, err := cmdutil.ToJSON(doc)
	if err != nil {
		return c, err
	}
	spec, err := compute.DecodeComputeSpec(raw)
	if err != nil {
		return c, err
	}
	if spec.MinInstances != nil {
		c.MinInstances = *spec.MinInstances
	}
	if spec.MaxInstances != nil {
		c.MaxInstances = *spec.MaxInstances
	}
	if spec.IdleTimeBeforeScaleDown != nil {
		c.IdleTimeBeforeScaleDown = time.Duration(*spec.IdleTimeBeforeScaleDown) * time.Second
	}
	// The cluster's own policy is the default replay (--idle-policy and
	// --sweep choose others), so what `compute show` prints replays as is.
	c.Adaptive = spec.IdlePolicy == compute.IdlePolicyAdaptive
	if spec.WaitCostPerHour != nil {
		c.WaitCostPerHour = *spec.WaitCostPerHour
	}
	if spec.Size != "" {
		cat, err := (&config.Config{}).Catalog(nil)
		if err != nil {
			return c, err
		}
		size, ok := cat.Size(spec.Size)
		if !ok {
			return c, fmt.Errorf("%s: size: %q is not in the catalog (shoal compute list-sizes)", path, spec.Size)
		}
		c.PricePerHour = size.PricePerHour
		if spec.Tier == compute.TierLowPriority {
			c.PricePerHour = size.LowPriorityPricePerHour
		}
	}
	return c, nil
}

// withPolicy sets a config's idle policy: "adaptive", "fixed:120s", or
// a bare duration.
func withPolicy(c sim.Config, p string) (sim.Config, error) {
	if p == "adaptive" {
		c.Adaptive = true
		return c, nil
	}
	d, err := time.ParseDuration(strings.TrimPrefix(p, "fixed:"))
	if err != nil || d < 0 {
		return c, fmt.Errorf("%q is not adaptive, fixed:DURATION or a duration such as 120s", p)
	}
	c.Adaptive, c.IdleTimeBeforeScaleDown = false, d
	return c, nil
}

// writeFile creates path and writes it with write, closing it either way.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
