// Package job is `shoal job`: submit jobs, follow them, and read their
// attempts, events, metrics and outputs.
package job

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

var jobColumns = []string{"name", "display_name", "status", "compute", "attempt_count", "status_reason", "created_on"}

// NewCommand is `shoal job`, as `az ml job`. files are how job create
// sends a document's local files (see LocalFiles).
func NewCommand(g *cmdutil.Globals, files LocalFiles) *cobra.Command {
	cmd := &cobra.Command{Use: "job", Short: "Submit and manage jobs (az ml job)"}
	cmd.AddCommand(newJobConnectSSHCommand(g))
	cmd.AddCommand(newJobCreateCommand(g, files), newJobShowCommand(g), newJobListCommand(g), newJobStreamCommand(g), newJobExportCommand(g),
		newJobCancelCommand(g), newJobUpdateCommand(g), newJobDownloadCommand(g), newJobAttemptsCommand(g), newJobEventsCommand(g))
	return cmd
}

// UploadFunc sends the local files a document names (relative to base,
// its YAML file's folder) to the server and puts their artifact IDs in
// doc in their place.
type UploadFunc func(ctx context.Context, c *client.Client, ws, base string, doc map[string]any) error

// LocalFiles are how `job create` sends the local files of a job document.
// They live in package cli, beside the environment and component commands
// that upload the same way and which this package cannot import (cli
// imports it), so cli hands them in.
type LocalFiles struct {
	// Command uploads a command job's code, inputs and inline
	// environment's files.
	Command UploadFunc
	// Pipeline reads a pipeline's local component files into it and
	// uploads the files its steps name.
	Pipeline UploadFunc
}

// Prepare readies a job document read from a file in folder base for
// the server, as `shoal job create -f` sends it: its local code, inputs
// and component files uploaded or inlined, by its type. `shoal schedule
// create -f` sends a schedule's job file through it too.
func (f LocalFiles) Prepare(ctx context.Context, c *client.Client, ws, base string, doc map[string]any) error {
	if err := refuseKindsNotRun(doc); err != nil {
		return err
	}
	upload := f.Command
	switch t, _ := doc["type"].(string); strings.ToLower(strings.TrimSpace(t)) {
	case job.JobTypePipeline:
		// Local component files are read and inlined here: the
		// server receives a self-contained document.
		upload = f.Pipeline
	case job.JobTypeSweep:
		upload = uploadSweepFiles(f.Command)
	}
	return upload(ctx, c, ws, base, doc)
}

func newJobCreateCommand(g *cmdutil.Globals, files LocalFiles) *cobra.Command {
	var file, name, compute string
	var sets []string
	var stream bool
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Submit a command job from Azure ML job YAML",
		Example: `  shoal job create -f job.yml
  shoal job create -f job.yml --set compute=azureml:gpu-cluster --stream`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if file == "" {
				return &core.Error{Code: core.EINVALID, Field: "file", Message: "--file: is required"}
			}
			doc, err := cmdutil.ReadYAMLDocument(file)
			if err != nil {
				return err
			}
			if name != "" {
				doc["name"] = name
			}
			if compute != "" {
				doc["compute"] = compute
			}
			for _, s := range sets {
				if err := cmdutil.ApplySet(doc, s); err != nil {
					return err
				}
			}
			if err := refuseKindsNotRun(doc); err != nil {
				return err
			}
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			if err := files.Prepare(cmd.Context(), c, ws, filepath.Dir(file), doc); err != nil {
				return err
			}
			raw, err := cmdutil.ToJSON(doc)
			if err != nil {
				return err
			}
			jobName, _ := doc["name"].(string)
			j, _, err := c.SubmitJob(cmd.Context(), ws, raw, jobName)
			if err != nil {
				return err
			}
			if stream {
				fmt.Fprintf(g.Stderr, "RunId: %s\n", j.Name)
				if j.IsParent() {
					if err := followParent(cmd.Context(), c, ws, j.Name, g.Stdout); err != nil {
						return err
					}
				} else {
					out, done := g.LogOut()
					if err := streamJobLogs(cmd.Context(), g, cmd, c, ws, j.Name, 0, out); err != nil {
						return err
					}
					if err := done(); err != nil {
						return err
					}
				}
				if j, err = c.GetJob(cmd.Context(), ws, j.Name); err != nil {
					return err
				}
				fmt.Fprintf(g.Stderr, "Execution Summary\n=================\nRunId: %s\nStatus: %s\n", j.Name, j.Status)
				if j.Status != job.JobCompleted {
					return fmt.Errorf("job %s ended %s: %s", j.Name, j.Status, j.Error)
				}
				return nil
			}
			return g.Render(j, jobColumns)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "job YAML file")
	cmd.Flags().StringVarP(&name, "name", "n", "", "job name (overrides the file's)")
	cmd.Flags().StringVar(&compute, "compute", "", "compute to run on (overrides the file's)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "set a key of the document: --set inputs.lr=0.1 (repeatable)")
	cmd.Flags().BoolVarP(&stream, "stream", "s", false, "stream the job's output until it ends")
	return cmd
}

func jobNameCommand(use, short string, g *cmdutil.Globals, run func(cmd *cobra.Command, c *client.Client, ws, name string) error) (*cobra.Command, *string) {
	var name string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			return run(cmd, c, ws, name)
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "job name")
	_ = cmd.MarkFlagRequired("name")
	return cmd, &name
}

func newJobShowCommand(g *cmdutil.Globals) *cobra.Command {
	var metrics bool
	cmd, _ := jobNameCommand("show", "Show a job, with why it waits when it is queued (--metrics: what it logged through MLflow)", g, func(cmd *cobra.Command, c *client.Client, ws, name string) error {
		if metrics {
			// JSON carries every point; a table or tsv a line per metric.
			asJSON := g.Output == "json"
			m, err := c.JobMetrics(cmd.Context(), ws, name, asJSON)
			if err != nil {
				return err
			}
			if asJSON {
				return g.Render(m, nil)
			}
			return g.Render(m.Metrics, []string{"key", "last", "step", "min", "max", "points"})
		}
		j, err := c.GetJob(cmd.Context(), ws, name)
		if err != nil {
			return err
		}
		if err := g.Render(j, jobColumns); err != nil || (g.Output != "table" && g.Output != "tsv") || g.Query != "" {
			return err
		}
		if len(j.Services) > 0 {
			// The job's services under its row: where each is reached
			// through the proxy while it runs, or why it does not run.
			fmt.Fprintln(g.Stdout)
			if err := g.Render(serviceRows(j), serviceColumns); err != nil || !j.IsParent() {
				return err
			}
		}
		if p := j.ParallelProgress; p != nil {
			// A parallel job's mini-batches under its row: how far it
			// got, at what rate, and when it should end.
			fmt.Fprintln(g.Stdout)
			if err := g.Render(p, parallelColumns); err != nil {
				return err
			}
		}
		if !j.IsParent() {
			return nil
		}
		// A table of a pipeline's steps or a sweep's trials under the
		// job's row (JSON and YAML carry them as fields).
		fmt.Fprintln(g.Stdout)
		if j.Pipeline != nil {
			return g.Render(j.Steps, []string{"name", "status", "job", "depends_on", "reason"})
		}
		return g.Render(trialRows(j), []string{"index", "job", "status", "metric", "parameters", "early_terminated", "best"})
	})
	cmd.Flags().BoolVar(&metrics, "metrics", false, "show the metrics the job logged (mlflow.log_metric): each one's last value, step, min, max and points; -o json adds every point, the parameters and the tags")
	return cmd
}

func newJobCancelCommand(g *cmdutil.Globals) *cobra.Command {
	cmd, _ := jobNameCommand("cancel", "Cancel a job: its processes are stopped", g, func(cmd *cobra.Command, c *client.Client, ws, name string) error {
		j, err := c.CancelJob(cmd.Context(), ws, name)
		if err != nil {
			return err
		}
		return g.Render(j, jobColumns)
	})
	return cmd
}

func newJobAttemptsCommand(g *cmdutil.Globals) *cobra.Command {
	cmd, _ := jobNameCommand("list-attempts", "List a job's attempts: node, start, end, exit code, reason", g, func(cmd *cobra.Command, c *client.Client, ws, name string) error {
		list, err := c.ListAttempts(cmd.Context(), ws, name)
		if err != nil {
			return err
		}
		if g.TableView() {
			return g.Render(attemptRows(list), attemptTableColumns)
		}
		return g.Render(list, []string{"number", "status", "start_time", "end_time", "exit_code", "reason"})
	})
	return cmd
}

func newJobEventsCommand(g *cmdutil.Globals) *cobra.Command {
	cmd, _ := jobNameCommand("events", "Show a job's event log", g, func(cmd *cobra.Command, c *client.Client, ws, name string) error {
		list, err := c.ListJobEvents(cmd.Context(), ws, name)
		if err != nil {
			return err
		}
		return g.Render(list, []string{"time", "kind", "actor", "reason"})
	})
	return cmd
}

func newJobStreamCommand(g *cmdutil.Globals) *cobra.Command {
	var rank int
	cmd, _ := jobNameCommand("stream", "Stream a job's output until it ends (a pipeline or sweep: its steps' or trials' changes)", g, func(cmd *cobra.Command, c *client.Client, ws, name string) error {
		if j, err := c.GetJob(cmd.Context(), ws, name); err == nil && j.IsParent() {
			return followParent(cmd.Context(), c, ws, name, g.Stdout)
		}
		out, done := g.LogOut()
		if err := streamJobLogs(cmd.Context(), g, cmd, c, ws, name, rank, out); err != nil {
			return err
		}
		return done()
	})
	cmd.Flags().IntVar(&rank, "rank", 0, "node rank whose output to show")
	// az ml has no `job logs`; those who type it want this.
	cmd.SuggestFor = []string{"logs", "log"}
	return cmd
}

// watchJobColumns are the columns of `job list --watch -o table`: the
// list's, with the reason, whose width varies most, last so that a long
// one shifts no column after the header has been printed.
var watchJobColumns = []string{"name", "display_name", "status", "compute", "attempt_count", "created_on", "status_reason"}

// watchJobWidths reserve, in a watched table, the width of the longest
// generated job name (a 7-letter adjective and noun and 10 characters,
// keen_shark_3v8k2qm1xz) and of the longest status, which jobs printed
// later may need.
var watchJobWidths = map[string]int{"name": len("sincere_lobster_0123456789"), "status": len(job.JobCancelRequested)}

func newJobListCommand(g *cmdutil.Globals) *cobra.Command {
	var status, compute string
	var max int
	var watch bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List jobs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			var statuses []string
			if status != "" {
				statuses = strings.Split(status, ",")
			}
			ctx := cmd.Context()
			seen := map[string]string{}                      // job → "status reason" last printed
			out := g.Stream(watchJobColumns, watchJobWidths) // one table header however many changes
			for first := true; ; first = false {
				list, err := c.ListJobs(ctx, ws, statuses, compute, max)
				if err != nil {
					return err
				}
				if !watch {
					return g.Render(list, jobColumns)
				}
				// Watching: the list once, then each job whose status or
				// reason changed, as it changes.
				changed := []*job.Job{} // not nil: no jobs is [] in JSON, "(none)" in a table
				for _, j := range list {
					key := j.Status + "\x00" + j.StatusReason
					if seen[j.Name] != key {
						seen[j.Name] = key
						changed = append(changed, j)
					}
				}
				if first || len(changed) > 0 {
					if err := out.Write(changed); err != nil {
						return err
					}
				}
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(time.Second):
				}
			}
		},
	}
	cmd.Flags().BoolVar(&watch, "watch", false, "keep printing jobs whose status or reason changes (Ctrl-C ends)")
	cmd.Flags().StringVar(&status, "status", "", "only jobs in these statuses (comma-separated)")
	cmd.Flags().StringVar(&compute, "compute", "", "only jobs of this compute")
	cmd.Flags().IntVar(&max, "max-results", 0, "at most this many jobs")
	return cmd
}

// newJobExportCommand is `shoal job export`: the workspace's job history
// as JSON, which `shoal sim --trace FILE` replays.
func newJobExportCommand(g *cmdutil.Globals) *cobra.Command {
	var file string
	cmd := &cobra.Command{Use: "export", Short: "Write the workspace's job history as JSON (for shoal sim --trace)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			jobs, err := c.ListJobs(cmd.Context(), ws, nil, "", 0)
			if err != nil {
				return err
			}
			b, err := json.MarshalIndent(jobs, "", "  ")
			if err != nil {
				return err
			}
			if file == "" || file == "-" {
				_, err = g.Stdout.Write(append(b, '\n'))
				return err
			}
			if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
				return fmt.Errorf("--file: %w", err)
			}
			fmt.Fprintf(g.Stderr, "%d jobs written to %s\n", len(jobs), file)
			return nil
		}}
	cmd.Flags().StringVarP(&file, "file", "f", "", "write to this file (default: standard output)")
	return cmd
}

// parallelColumns are a parallel job's progress as `job show` prints it
// under the job's row.
var parallelColumns = []string{"mini_batches", "done", "failed", "retried", "in_flight", "left", "failed_items", "per_minute", "eta", "aborted"}

// trialRow is a sweep's trial as `job show -o table` prints it.
type trialRow struct {
	Index           int      `json:"index"`
	Job             string   `json:"job"`
	Status          string   `json:"status"`
	Metric          *float64 `json:"metric,omitempty"`
	Parameters      string   `json:"parameters"`
	EarlyTerminated string   `json:"early_terminated,omitempty"`
	Best            string   `json:"best,omitempty"`
}

// trialRows are a sweep's trials, their parameters as name=value.
func trialRows(j *job.Job) []trialRow {
	out := make([]trialRow, 0, len(j.Trials))
	for _, t := range j.Trials {
		names := make([]string, 0, len(t.Parameters))
		for k := range t.Parameters {
			names = append(names, k)
		}
		sort.Strings(names)
		var ps []string
		for _, k := range names {
			ps = append(ps, k+"="+job.FormatInputValue(t.Parameters[k]))
		}
		r := trialRow{Index: t.Index, Job: t.Job, Status: t.Status, Metric: t.Metric, Parameters: strings.Join(ps, " "), EarlyTerminated: t.EarlyTerminated}
		if t.Job == j.BestChildRunID {
			r.Best = "best"
		}
		out = append(out, r)
	}
	return out
}

// uploadSweepFiles uploads a sweep's local inputs and its trial's code
// and build context, with upload, which does it for a command job.
func uploadSweepFiles(upload UploadFunc) UploadFunc {
	return func(ctx context.Context, c *client.Client, ws, base string, doc map[string]any) error {
		if err := upload(ctx, c, ws, base, doc); err != nil {
			return err
		}
		if trial, ok := doc["trial"].(map[string]any); ok {
			if err := upload(ctx, c, ws, base, trial); err != nil {
				return prefixField(err, "trial.")
			}
		}
		return nil
	}
}

// prefixField puts prefix before the field an error names.
func prefixField(err error, prefix string) error {
	if e, ok := err.(*core.Error); ok && e.Field != "" {
		c := *e
		c.Field = prefix + e.Field
		c.Message = strings.Replace(c.Message, e.Field+":", c.Field+":", 1)
		return &c
	}
	return err
}
