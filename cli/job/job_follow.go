package job

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/format"
	"github.com/shoal-ml/shoal/domain/job"
)

// followParent prints a pipeline's steps' or a sweep's trials' changes
// of status until the parent ends (a parent has no output of its own:
// its children's is theirs, `shoal job stream -n <child>`). It asks the
// server once a second at first and backs off to every 5 s while
// nothing changes.
func followParent(ctx context.Context, c *client.Client, ws, name string, w io.Writer) error {
	seen := map[string]string{}
	wait := time.Second
	for {
		j, err := c.GetJob(ctx, ws, name)
		if err != nil {
			return err
		}
		changed := false
		note := func(key, line string) {
			if seen[key] != line {
				seen[key] = line
				changed = true
				fmt.Fprintln(w, line)
			}
		}
		for _, s := range j.Steps {
			line := fmt.Sprintf("step %s: %s", s.Name, s.Status)
			if s.Job != "" {
				line += " (job " + s.Job + ")"
			}
			if s.Status == job.JobNotStarted && s.Reason != "" {
				line += ": " + s.Reason
			}
			note("step/"+s.Name, line)
		}
		for _, t := range j.Trials {
			line := fmt.Sprintf("trial %d %s: %s", t.Index, t.Job, t.Status)
			if t.Metric != nil {
				line += ", metric " + format.Number(*t.Metric)
			}
			if t.EarlyTerminated != "" {
				line += ", early terminated (" + t.EarlyTerminated + ")"
			}
			note(fmt.Sprintf("trial/%d", t.Index), line)
		}
		if job.JobTerminal(j.Status) {
			line := fmt.Sprintf("%s %s: %s", j.Type, j.Status, j.StatusReason)
			note("parent", line)
			return nil
		}
		if changed {
			wait = time.Second
		} else if wait < 5*time.Second {
			wait += time.Second
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}
