package runhistory

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// A pipeline or a sweep runs nothing itself: its children have the logs.
// Azure gives such a parent one log of its own, which azure-ai-ml streams
// when no rank log is listed: logs/azureml/executionlogs.txt for a
// pipeline, azureml-logs/hyperdrive.txt for a sweep. Shoal's is the
// parent's timeline: each child's submission, start and end, in time
// order, which `shoal job stream` of the parent shows as changes of
// status. Lines only ever follow earlier ones, as azure-ai-ml prints a
// log from the line it printed last.
const (
	pipelineLog = "logs/azureml/executionlogs.txt"
	sweepLog    = "azureml-logs/hyperdrive.txt"
)

// parentLogName is a parent job's log file; "" for a command job.
func parentLogName(j *job.Job) string {
	switch {
	case j.Pipeline != nil:
		return pipelineLog
	case j.Sweep != nil:
		return sweepLog
	}
	return ""
}

// timelineLine is one line of a parent's timeline.
type timelineLine struct {
	at    time.Time
	order int // the child's place among the parent's, then the event's
	text  string
}

// parentLog is a parent's timeline, whole: nothing is written before
// every child is read.
func (h *Handlers) parentLog(ctx context.Context, j *job.Job) ([]byte, error) {
	type child struct{ label, name string }
	var children []child
	for _, s := range j.Steps {
		if s.Job != "" {
			children = append(children, child{"step " + s.Name, s.Job})
		}
	}
	for _, t := range j.Trials {
		if t.Job != "" {
			children = append(children, child{fmt.Sprintf("trial %d", t.Index), t.Job})
		}
	}
	var lines []timelineLine
	for i, c := range children {
		cj, err := h.cfg.Jobs.FindJob(ctx, j.Workspace, c.name)
		if core.ErrorCode(err) == core.ENOTFOUND {
			continue // recorded, not yet stored
		}
		if err != nil {
			return nil, err
		}
		lines = append(lines, timelineLine{cj.CreatedOn, 3 * i, fmt.Sprintf("%s: job %s submitted", c.label, cj.Name)})
		if cj.StartTime != nil {
			lines = append(lines, timelineLine{*cj.StartTime, 3*i + 1, fmt.Sprintf("%s: job %s running", c.label, cj.Name)})
		}
		if cj.EndTime != nil && job.JobTerminal(cj.Status) {
			lines = append(lines, timelineLine{*cj.EndTime, 3*i + 2, fmt.Sprintf("%s: job %s %s", c.label, cj.Name, cj.Status)})
		}
	}
	if j.EndTime != nil && job.JobTerminal(j.Status) {
		end := fmt.Sprintf("%s %s %s", j.Type, j.Name, j.Status)
		if j.StatusReason != "" {
			end += ": " + j.StatusReason
		}
		lines = append(lines, timelineLine{*j.EndTime, 3 * len(children), end})
	}
	slices.SortStableFunc(lines, func(a, b timelineLine) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.order - b.order
	})
	var b bytes.Buffer
	for _, l := range lines {
		fmt.Fprintf(&b, "%s %s\n", l.at.UTC().Format(time.RFC3339), l.text)
	}
	return b.Bytes(), nil
}
