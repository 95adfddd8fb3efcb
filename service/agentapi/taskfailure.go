package agentapi

import (
	"errors"

	"github.com/shoal-ml/shoal/domain/job"
)

// TaskFailure is Jobs.AgentTask's answer for a rank that cannot be
// handed over for the job's own fault (an input whose datastore was
// deleted since submission): the sync ends the rank Failed with Failure
// and Msg (Jobs.FailRankForNode) instead of handing a task, and the
// node is not to blame.
type TaskFailure struct {
	Failure job.RankFailure
	Msg     string
}

// Error is the failure's words.
func (e *TaskFailure) Error() string { return e.Msg }

// AsTaskFailure returns err's TaskFailure, if it is one.
func AsTaskFailure(err error) (*TaskFailure, bool) {
	var f *TaskFailure
	ok := errors.As(err, &f)
	return f, ok
}
