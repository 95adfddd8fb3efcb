package jobrun

import (
	"time"

	"github.com/shoal-ml/shoal/domain/node"
)

// nodeTimes places a rank's run, as its node timed it, on the server's
// clock: it ran for the node's EndTime - StartTime (one clock, so skew
// between the machines cancels) and ended when the node says, no later
// than now (a node whose clock runs ahead) and not so early that it would
// have started before its attempt was made (one whose clock runs
// behind): then it starts when the attempt was made. ok is false when
// the report does not carry both times in order.
func nodeTimes(rep *node.RankReport, made, now time.Time) (start, end time.Time, ok bool) {
	if rep.StartTime == nil || rep.EndTime == nil || rep.EndTime.Before(*rep.StartTime) {
		return time.Time{}, time.Time{}, false
	}
	ran := rep.EndTime.Sub(*rep.StartTime)
	end = rep.EndTime.UTC()
	if end.After(now) {
		end = now
	}
	start = end.Add(-ran)
	if !made.IsZero() && start.Before(made) {
		start = made.UTC()
		end = start.Add(ran)
		if end.After(now) {
			// Longer than the server has known the attempt: a clock
			// that jumped. Keep within what the server saw.
			end = now
		}
	}
	return start, end, true
}
