package jobrun

import (
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// CodePreparing is the event of a rank whose node moved to another phase
// of preparing its image (pulling, building, starting).
const CodePreparing Code = "preparing"

// preparing records a rank's progress report before its processes start
// ("pulling localhost:5000/team/train:3 — 120 of 216 MB") as the rank's
// reason, and as the job's while the job prepares; the state does not
// change. An event is written only when the phase (the report's first
// word) changes, not at every byte. A report that arrives after the rank
// started or ended changes nothing: it is late.
func preparing(o *Output, rank int, rep *node.RankReport) {
	j, a := &o.Job, o.Attempt
	rs := a.Ranks[rank]
	if rs.Status != job.AttemptPreparing || j.CurrentAttemptID != a.ID || rep.Reason == "" || rs.Reason == rep.Reason {
		return
	}
	o.Changed = true
	before := preparePhase(rs.Reason)
	rs.Reason = rep.Reason
	what := fmt.Sprintf("rank %d on %s: %s", rs.Rank, rs.NodeID, rep.Reason)
	if len(a.Ranks) == 1 {
		what = rep.Reason
	}
	if j.Status == job.JobPreparing {
		j.StatusReason = fmt.Sprintf("attempt %d preparing: %s", a.Number, what)
	}
	if preparePhase(rep.Reason) != before {
		o.emit(CodePreparing, "attempt %d: %s", a.Number, what)
	}
}

// preparePhase is a preparing report's phase: its first word ("pulling",
// "building", "starting"), lower-cased; "" for a reason that is none.
func preparePhase(reason string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(reason), " ")
	return strings.ToLower(first)
}
