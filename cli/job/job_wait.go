package job

import (
	"context"
	"io"
	"sync"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/job"
)

// streamJobLogs streams a job's output to out until the job ends. Until
// its first byte comes, it shows on stderr where the job is and why it
// waits (Queued: the scheduler's reason; Preparing: its image pulls), as
// every long wait does; the status line is cleared before the output
// starts.
func streamJobLogs(ctx context.Context, g *cmdutil.Globals, cmd *cobra.Command, c *client.Client, ws, name string, rank int, out io.Writer) error {
	p := g.NewProgress(cmd, "Job "+name)
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Its errors end the status line only: the stream says what
		// went wrong with the job, if anything did.
		_ = cmdutil.PollUntil(wctx, p, func(ctx context.Context) (string, bool, error) {
			j, err := c.GetJob(ctx, ws, name)
			if err != nil {
				return "", false, err
			}
			return jobWaitState(j), !jobWaiting(j.Status), nil
		})
		p.Done("")
	}()
	end := func() {
		stop()
		wg.Wait()
	}
	err := c.StreamLogs(ctx, ws, name, rank, 0, true, &firstByteWriter{w: out, first: end})
	end()
	return err
}

// jobWaiting reports whether a job in status has not started yet.
func jobWaiting(status string) bool {
	return status == job.JobNotStarted || status == job.JobQueued || status == job.JobPreparing
}

// jobWaitState is a job's status with its reason: "Queued: waiting for
// nodes to be provisioned (0 of 1 ready)".
func jobWaitState(j *job.Job) string {
	if j.StatusReason == "" {
		return j.Status
	}
	return j.Status + ": " + j.StatusReason
}

// firstByteWriter calls first before its first write.
type firstByteWriter struct {
	w     io.Writer
	first func()
	once  sync.Once
}

// Write writes b to the writer underneath, after calling first once.
func (f *firstByteWriter) Write(b []byte) (int, error) {
	f.once.Do(f.first)
	return f.w.Write(b)
}
