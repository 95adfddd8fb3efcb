// Package schedule is `shoal schedule`, az ml schedule's verbs: job
// schedules in Azure's schedule YAML. A schedule's job file is read
// here, beside the schedule file, and sent as a whole job document with
// its local files uploaded, as `shoal job create -f` sends one.
package schedule

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/cli/job"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
	dschedule "github.com/shoal-ml/shoal/domain/schedule"
)

// columns are the schedule table's columns.
var columns = []string{"name", "trigger.type", "trigger.expression", "trigger.frequency", "is_enabled", "status.next_fire_time", "status.last_job", "status.last_message"}

// NewCommand returns `shoal schedule`; files send a job file's local
// files (cli/job.LocalFiles).
func NewCommand(g *cmdutil.Globals, files job.LocalFiles) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Job schedules: submit a job on a cron or recurrence trigger",
		Long: `Job schedules, as Azure ML's: a trigger (cron, or a recurrence with
frequency and interval, in a time zone) and the job each firing submits
(create_job: a job file, an existing job azureml:<job>, with overrides).
A firing submits one job named <schedule>-<yyyymmddThhmm>, as the user who
last created, updated or enabled the schedule; a firing missed while no
server ran is started once when one returns, and says so. Readers list
and show schedules; Contributors create, update, enable, disable, trigger
and delete them.`,
	}
	cmd.AddCommand(newCreateCommand(g, files, "create"), newCreateCommand(g, files, "update"), newShowCommand(g), newListCommand(g),
		nameVerb(g, "enable", "Enable a schedule: it fires from now on (firings missed while disabled are not caught up)", func(ctx context.Context, c *client.Client, ws, n string) (any, error) {
			return c.SetScheduleEnabled(ctx, ws, n, true)
		}),
		nameVerb(g, "disable", "Disable a schedule: it no longer fires", func(ctx context.Context, c *client.Client, ws, n string) (any, error) {
			return c.SetScheduleEnabled(ctx, ws, n, false)
		}),
		nameVerb(g, "trigger", "Fire a schedule now: submit its job at once, as you", func(ctx context.Context, c *client.Client, ws, n string) (any, error) {
			return c.TriggerSchedule(ctx, ws, n)
		}),
		newDeleteCommand(g))
	return cmd
}

func newCreateCommand(g *cmdutil.Globals, files job.LocalFiles, verb string) *cobra.Command {
	var (
		file, name string
		sets       []string
	)
	cmd := &cobra.Command{
		Use: verb,
		Short: map[string]string{"create": "Create a job schedule from Azure ML schedule YAML",
			"update": "Update a job schedule from its YAML (the whole schedule: its trigger and job are replaced)"}[verb],
		Example: "  shoal schedule " + verb + " -f schedule.yml\n  shoal schedule " + verb + " -f schedule.yml --set trigger.expression=\"0 3 * * *\"",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			doc, n, err := readSchedule(file, name, sets)
			if err != nil {
				return err
			}
			return g.CallAndRender(columns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
				if err := resolveJobFile(ctx, c, ws, filepath.Dir(file), doc, files); err != nil {
					return nil, err
				}
				raw, err := cmdutil.ToJSON(doc)
				if err != nil {
					return nil, err
				}
				sc, _, err := c.PutSchedule(ctx, ws, n, raw)
				return sc, err
			})(cmd, args)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the schedule's YAML file")
	cmd.Flags().StringVarP(&name, "name", "n", "", "the schedule's name (overrides the file's)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "set a key of the document: --set trigger.time_zone=UTC (repeatable)")
	return cmd
}

// readSchedule reads -f, applies --name and --set, and returns the
// document with its name.
func readSchedule(file, name string, sets []string) (map[string]any, string, error) {
	if file == "" {
		return nil, "", &core.Error{Code: core.EINVALID, Field: "file", Message: "--file: is required"}
	}
	doc, err := cmdutil.ReadYAMLDocument(file)
	if err == nil && name != "" {
		doc["name"] = name
	}
	for i := 0; err == nil && i < len(sets); i++ {
		err = cmdutil.ApplySet(doc, sets[i])
	}
	if err != nil {
		return nil, "", err
	}
	n, _ := doc["name"].(string)
	if n = strings.TrimSpace(n); n == "" {
		return nil, "", &core.Error{Code: core.EINVALID, Field: "name", Message: "name: is required, in the file or --name"}
	}
	return doc, n, nil
}

// resolveJobFile replaces a schedule's create_job that names a local job
// file (`./job.yml`, or `{job: ./job.yml, <overrides>}`), relative to the
// schedule file's folder base, with {job: <the job document>}: the file
// read, the overrides merged (as azure-ai-ml's merge_dict), its local
// files uploaded as `shoal job create -f` uploads them. azureml:<job>
// and an inline job are the server's to resolve.
func resolveJobFile(ctx context.Context, c *client.Client, ws, base string, doc map[string]any, files job.LocalFiles) error {
	var (
		path      string
		overrides = map[string]any{}
	)
	switch cj := doc["create_job"].(type) {
	case string:
		path = cj
	case map[string]any:
		p, ok := cj["job"].(string)
		if !ok {
			return nil
		}
		path = p
		for k, v := range cj {
			if k != "job" {
				overrides[k] = v
			}
		}
	default:
		return nil
	}
	if strings.HasPrefix(strings.TrimSpace(path), "azureml:") {
		return nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(base, path)
	}
	jobDoc, err := cmdutil.ReadYAMLDocument(path)
	if err != nil {
		return core.FieldErrorf("create_job", "%s", core.ErrorMessage(err))
	}
	merged, err := merge(jobDoc, overrides)
	if err != nil {
		return err
	}
	if err := files.Prepare(ctx, c, ws, filepath.Dir(path), merged); err != nil {
		return fmt.Errorf("create_job (%s): %w", path, err)
	}
	doc["create_job"] = map[string]any{"job": merged}
	return nil
}

// merge is dschedule.MergeJob over decoded YAML documents.
func merge(jobDoc, overrides map[string]any) (map[string]any, error) {
	a, err := cmdutil.ToJSON(jobDoc)
	if err != nil {
		return nil, err
	}
	b, err := cmdutil.ToJSON(overrides)
	if err != nil {
		return nil, err
	}
	m, err := dschedule.MergeJob(a, b)
	if err != nil {
		return nil, core.FieldErrorf("create_job", "%v", err)
	}
	var out map[string]any
	return out, json.Unmarshal(m, &out)
}

// nameVerb is a verb on one schedule named by the argument or --name
// that prints what call answers (cols: its table's columns).
func nameVerb(g *cmdutil.Globals, use, short string, call func(ctx context.Context, c *client.Client, ws, name string) (any, error)) *cobra.Command {
	cols := columns
	if use == "trigger" {
		cols = []string{"name", "status", "display_name", "compute", "created_on"}
	}
	return named(g, use, short, func(cmd *cobra.Command, c *client.Client, ws, n string) error {
		v, err := call(cmd.Context(), c, ws, n)
		if err != nil {
			return err
		}
		return g.Render(v, cols)
	})
}

// named is a command on one schedule named by the argument or --name.
func named(g *cmdutil.Globals, use, short string, run func(cmd *cobra.Command, c *client.Client, ws, name string) error) *cobra.Command {
	var flag string
	cmd := &cobra.Command{Use: use + " [NAME]", Short: short, Args: cobra.MaximumNArgs(1)}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		n, err := cmdutil.NameArg(args, flag, "schedule")
		if err != nil {
			return err
		}
		c, ws, err := g.Client()
		if err != nil {
			return err
		}
		return run(cmd, c, ws, n)
	}
	cmd.Flags().StringVarP(&flag, "name", "n", "", "the schedule's name")
	return cmd
}

func newShowCommand(g *cmdutil.Globals) *cobra.Command {
	return nameVerb(g, "show", "Show a schedule: its trigger, job, next fire time, last job and last message", func(ctx context.Context, c *client.Client, ws, n string) (any, error) {
		return c.GetSchedule(ctx, ws, n)
	})
}

func newListCommand(g *cmdutil.Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the workspace's schedules, each with its next fire time",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(columns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListSchedules(ctx, ws)
		}),
	}
}

func newDeleteCommand(g *cmdutil.Globals) *cobra.Command {
	return named(g, "delete", "Delete a schedule (the jobs it submitted stay)", func(cmd *cobra.Command, c *client.Client, ws, n string) error {
		if err := c.DeleteSchedule(cmd.Context(), ws, n); err != nil {
			return err
		}
		fmt.Fprintf(g.Stderr, "deleted schedule %s\n", n)
		return nil
	})
}
