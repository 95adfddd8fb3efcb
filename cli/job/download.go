package job

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/internal/archive"
)

// newJobDownloadCommand is `shoal job download`, as `az ml job download`:
// a job's outputs into <download-path>/<job>/, each output a folder of
// its name (the job's ./outputs and ./logs in artifacts/). By default a
// command job's every rank's outputs, a pipeline's own outputs;
// --output-name one output; --all every output (a pipeline's: every
// step's, in <step>/<output>/).
func newJobDownloadCommand(g *cmdutil.Globals) *cobra.Command {
	var path, output string
	var all bool
	cmd, _ := jobNameCommand("download", "Download a job's outputs (--output-name one, --all every one; artifacts holds ./outputs and ./logs)", g, func(cmd *cobra.Command, c *client.Client, ws, name string) error {
		if all && output != "" {
			return core.FieldErrorf("all", "--all and --output-name ask for different things: give one")
		}
		j, err := c.GetJob(cmd.Context(), ws, name)
		if err != nil {
			return err
		}
		d := downloader{ctx: cmd.Context(), c: c, ws: ws}
		dest := filepath.Join(path, name)
		switch {
		case j.Pipeline != nil && all:
			err = d.steps(j, dest)
		case j.Pipeline != nil && output != "":
			err = d.output(name, output, 1, filepath.Join(dest, output))
		case j.Pipeline != nil:
			err = d.outputs(j, dest)
		case output != "":
			err = d.output(name, output, rankCount(j), filepath.Join(dest, output))
		case all:
			err = d.outputs(j, dest)
		default:
			err = d.ranks(j, dest)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(g.Stderr, "Downloaded the outputs of %s to %s\n", name, dest)
		return nil
	})
	cmd.Example = `  shoal job download -n my-job
  shoal job download -n my-job --output-name artifacts
  shoal job download -n my-pipeline --all -p ./results`
	cmd.Flags().StringVarP(&path, "download-path", "p", ".", "folder to download into (a subfolder named after the job is created)")
	cmd.Flags().StringVar(&output, "output-name", "", "download this output only (artifacts: the job's ./outputs and ./logs)")
	cmd.Flags().BoolVar(&all, "all", false, "download every output, each into a folder of its name (a pipeline: every step's, into <step>/<output>/)")
	return cmd
}

// downloader fetches outputs for one `job download`.
type downloader struct {
	ctx context.Context
	c   *client.Client
	ws  string
}

// rankCount is how many ranks may have left outputs.
func rankCount(j *job.Job) int {
	if j.Resources != nil && j.Resources.InstanceCount > 1 {
		return j.Resources.InstanceCount
	}
	return 1
}

// ranks unpacks every rank's whole outputs archive into dest: later
// ranks first, rank 0 last, so rank 0's files win where both wrote.
func (d downloader) ranks(j *job.Job, dest string) error {
	got := 0
	for rank := rankCount(j) - 1; rank >= 0; rank-- {
		body, err := d.c.DownloadOutputs(d.ctx, d.ws, j.Name, rank)
		if core.ErrorCode(err) == core.ENOTFOUND {
			continue
		} else if err != nil {
			return err
		}
		if err := unpack(body, dest); err != nil {
			return err
		}
		got++
	}
	if got == 0 {
		return core.Errorf(core.ENOTFOUND, "job %s has no outputs (yet)", j.Name)
	}
	return nil
}

// output unpacks one output of job name, from each of its ranks (rank 0
// last), into dest.
func (d downloader) output(name, output string, ranks int, dest string) error {
	got := 0
	var last error
	for rank := ranks - 1; rank >= 0; rank-- {
		body, err := d.c.DownloadOutput(d.ctx, d.ws, name, output, rank)
		var se *core.Error
		if errors.As(err, &se) && se.Code == core.ENOTFOUND && se.Field == "" {
			last = err // this rank left no outputs
			continue
		} else if err != nil {
			return err
		}
		if err := unpack(body, dest); err != nil {
			return err
		}
		got++
	}
	if got == 0 {
		return last
	}
	return nil
}

// outputs unpacks each output j lists into dest/<output>.
func (d downloader) outputs(j *job.Job, dest string) error {
	if len(j.Outputs) == 0 {
		if j.Pipeline != nil {
			return core.Errorf(core.ENOTFOUND, "pipeline %s declares no outputs; --all downloads its steps' outputs", j.Name)
		}
		return core.Errorf(core.ENOTFOUND, "job %s has no outputs (yet)", j.Name)
	}
	ranks := rankCount(j)
	if j.Pipeline != nil {
		ranks = 1
	}
	for _, o := range core.SortedKeys(j.Outputs) {
		if err := d.output(j.Name, o, ranks, filepath.Join(dest, o)); err != nil {
			return err
		}
	}
	return nil
}

// steps unpacks every output of each of pipeline p's steps that ran into
// dest/<step>/<output>.
func (d downloader) steps(p *job.Job, dest string) error {
	got := 0
	for _, st := range p.Steps {
		if st.Job == "" {
			continue // never submitted: nothing to download
		}
		child, err := d.c.GetJob(d.ctx, d.ws, st.Job)
		if err != nil {
			return err
		}
		err = d.outputs(child, filepath.Join(dest, st.Name))
		if core.ErrorCode(err) == core.ENOTFOUND {
			continue // the step left none
		} else if err != nil {
			return fmt.Errorf("step %s: %w", st.Name, err)
		}
		got++
	}
	if got == 0 {
		return core.Errorf(core.ENOTFOUND, "no step of pipeline %s has left outputs (yet)", p.Name)
	}
	return nil
}

// unpack unpacks an archive the server sent into dest, checking it as
// any archive from elsewhere.
func unpack(body io.ReadCloser, dest string) error {
	defer body.Close()
	return archive.Unpack(body, dest, archive.Limits{})
}
