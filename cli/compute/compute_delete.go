package compute

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// activeJobStatuses are the statuses of a job that is not over. A
// deleting compute waits for those that run; the queued ones the server
// fails (they would never start).
var activeJobStatuses = []string{job.JobQueued, job.JobPreparing, job.JobRunning, job.JobFinalizing, job.JobCancelRequested}

// listedRunning is how many running jobs a delete's status names before
// it says "and N more".
const listedRunning = 3

func newComputeDeleteCommand(g *cmdutil.Globals) *cobra.Command {
	var name string
	var yes, noWait, force bool
	cmd := &cobra.Command{
		Use:   "delete",
		Short: "Delete a compute (asks for confirmation unless --yes); waits for its running jobs to end unless --force cancels them",
		Example: `  shoal compute delete -n cpu-cluster --yes
  shoal compute delete -n cpu-cluster --yes --force`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			if !yes {
				q := fmt.Sprintf("Are you sure you want to delete compute %q in workspace %q? (y/n): ", name, ws)
				if force {
					q = fmt.Sprintf("Are you sure you want to delete compute %q in workspace %q and cancel its queued and running jobs? (y/n): ", name, ws)
				}
				ok, err := cmdutil.Confirm(g, q)
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("delete cancelled")
				}
			}
			ctx := cmd.Context()
			d := &computeDelete{c: c, ws: ws, name: name, force: force, p: g.NewProgress(cmd, "Deleting compute "+name), canceled: map[string]bool{}}
			if force {
				// First, so that a queued job is canceled, as asked, not
				// failed by the delete; jobs submitted in between are
				// canceled by the wait.
				if _, err := d.cancelJobs(ctx); err != nil {
					return err
				}
			}
			if _, err := c.DeleteCompute(ctx, ws, name, ""); err != nil {
				return err
			}
			if noWait {
				return nil
			}
			if err := cmdutil.PollUntil(ctx, d.p, d.check); err != nil {
				d.p.Done("")
				return err
			}
			d.p.Done("deleted")
			return nil
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "compute name")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "do not wait for the deletion to finish")
	cmd.Flags().BoolVar(&force, "force", false, "cancel the compute's queued and running jobs first instead of waiting for them to end")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

// computeDelete is one `compute delete` as it waits for the compute to go.
type computeDelete struct {
	c        *client.Client
	ws, name string
	force    bool
	p        *cmdutil.Progress
	// canceled are the jobs this command canceled (--force), each once.
	canceled map[string]bool
	// hinted: the user was told once how to end the running jobs sooner.
	hinted bool
	// where are the nodes of the running jobs as last listed, by job.
	where map[string][]string
}

// cancelJobs cancels the compute's jobs that are not over (--force) and
// says which; it returns the jobs as listed.
func (d *computeDelete) cancelJobs(ctx context.Context) ([]*job.Job, error) {
	jobs, err := d.c.ListJobs(ctx, d.ws, activeJobStatuses, d.name, 0)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, j := range jobs {
		if d.canceled[j.Name] || j.Status == job.JobCancelRequested {
			continue
		}
		if _, err := d.c.CancelJob(ctx, d.ws, j.Name); err != nil {
			// A job that ended or went meanwhile needs no cancel.
			if code := core.ErrorCode(err); code != core.ECONFLICT && code != core.ENOTFOUND {
				return nil, fmt.Errorf("--force: cancel job %s: %w", j.Name, err)
			}
		}
		d.canceled[j.Name] = true
		names = append(names, fmt.Sprintf("%s (%s)", j.Name, j.Status))
	}
	if len(names) > 0 {
		d.p.Note(fmt.Sprintf("--force: canceled %s on compute %s: %s", plural(len(names), "job"), d.name, strings.Join(names, ", ")))
	}
	return jobs, nil
}

// check is one look at the deletion: done once the compute is gone,
// else what it still waits for.
func (d *computeDelete) check(ctx context.Context) (string, bool, error) {
	comp, err := d.c.GetCompute(ctx, d.ws, d.name)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return "", true, nil
	} else if err != nil {
		return "", false, err
	}
	var jobs []*job.Job
	if d.force {
		jobs, err = d.cancelJobs(ctx)
	} else {
		jobs, err = d.c.ListJobs(ctx, d.ws, activeJobStatuses, d.name, 0)
	}
	if err != nil {
		return "", false, err
	}
	var running []*job.Job
	queued := 0
	for _, j := range jobs {
		if j.Status == job.JobQueued {
			queued++
		} else {
			running = append(running, j)
		}
	}
	var parts []string
	var nodes []*node.Node
	if d.needNodes(running, queued) {
		if nodes, err = d.c.ListNodes(ctx, d.ws, d.name); err != nil && core.ErrorCode(err) != core.ENOTFOUND {
			return "", false, err
		}
		d.where = jobNodes(nodes)
	}
	if len(running) > 0 {
		parts = append(parts, runningJobsState(running, d.where))
		if !d.force && !d.hinted {
			d.hinted = true
			d.p.Note(fmt.Sprintf("compute %s has %s: the delete waits for them to end (end them sooner with `shoal job cancel -n %s`, or delete with --force)",
				d.name, plural(len(running), "running job"), running[0].Name))
		}
	}
	if queued > 0 {
		parts = append(parts, fmt.Sprintf("%s failing (the compute is being deleted)", plural(queued, "queued job")))
	}
	if len(parts) == 0 {
		switch {
		case comp.Type == compute.ComputeTypeInstance:
			parts = append(parts, "stopping the instance (state "+comp.State+")")
		case len(nodes) > 0:
			parts = append(parts, "releasing "+plural(len(nodes), "node"))
		default:
			parts = append(parts, "removing the compute")
		}
	}
	return strings.Join(parts, "; "), false, nil
}

// needNodes reports whether a check must list the compute's nodes: to
// say where a job runs that it has not placed yet, or, with no job left,
// to count the nodes being released. A running job does not move, so a
// long wait for one lists them once.
func (d *computeDelete) needNodes(running []*job.Job, queued int) bool {
	if len(running) == 0 {
		return queued == 0
	}
	for _, j := range running {
		if _, ok := d.where[j.Name]; !ok {
			return true
		}
	}
	return false
}

// jobNodes are the nodes each job runs on, by job name.
func jobNodes(nodes []*node.Node) map[string][]string {
	where := map[string][]string{}
	for _, n := range nodes {
		if n.CurrentJobName != "" {
			where[n.CurrentJobName] = append(where[n.CurrentJobName], n.ID)
		}
	}
	return where
}

// runningJobsState says which jobs a delete waits for and where they run
// (where: node IDs by job name): "waiting for 1 running job: train
// (Running on node c-0)".
func runningJobsState(running []*job.Job, where map[string][]string) string {
	var names []string
	for i, j := range running {
		if i == listedRunning {
			names = append(names, fmt.Sprintf("and %d more", len(running)-listedRunning))
			break
		}
		s := j.Name + " (" + j.Status
		if on := where[j.Name]; len(on) == 1 {
			s += " on node " + on[0]
		} else if len(on) > 1 {
			s += " on nodes " + strings.Join(on, ", ")
		}
		names = append(names, s+")")
	}
	return fmt.Sprintf("waiting for %s: %s", plural(len(running), "running job"), strings.Join(names, ", "))
}

// plural is "1 job", "2 jobs".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
