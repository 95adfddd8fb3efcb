package agent

import (
	"context"
	"time"

	"github.com/shoal-ml/shoal/agent/runner"
	"github.com/shoal-ml/shoal/domain/node"
)

// leaveTimeout bounds the notice an agent whose machine is being taken
// back sends: Slurm kills the pilot KillWait (30 s by default) after its
// SIGTERM.
const leaveTimeout = 5 * time.Second

// signalGrace is how long a rank killed by a signal waits to learn
// whether the agent is being stopped too. Slurm signals every process of
// a pilot at once; the rank's processes may die before the agent has
// handled its own SIGTERM.
const signalGrace = 2 * time.Second

// exitGrace is the same wait for a rank that exited on its own (any exit
// code): one that catches SIGTERM and exits — to checkpoint, or a shell
// whose child was killed and which then ran on to its end — usually does
// so a little after the signal, but may beat the agent to it.
const exitGrace = 300 * time.Millisecond

// leave tells the server that the node's machine is being taken back, so
// that it marks the node preempted and requeues its work at once instead
// of waiting for the node's lease to run out. The ranks' own reports
// follow.
func (a *Agent) leave(ctx context.Context, why string) {
	ctx, cancel := context.WithTimeout(ctx, leaveTimeout)
	defer cancel()
	req := &node.AgentSyncRequest{Running: a.running(), Pending: a.outbox.Refs(), Leaving: why}
	if _, err := a.client.Sync(ctx, req, 0); err != nil {
		a.log.Warn("telling the server this node is leaving failed; its lease will run out instead", "err", err)
		return
	}
	a.log.Info("told the server this node is leaving", "why", why)
}

// takenBack reports whether a rank that ended with reason and exit code
// was ended by the machine being taken back rather than by the job: under
// PreemptOnSignal, a rank that exited or was killed by a signal (code
// 128+n) while the agent itself is being stopped. Counting a rank that
// truly finished in that instant as preempted costs a rerun; counting an
// interrupted one as finished would lose its work, so the doubt goes to
// preemption.
func (a *Agent) takenBack(reason string, code int) bool {
	if !a.cfg.PreemptOnSignal || (reason != runner.ReasonFailed && reason != runner.ReasonCompleted) {
		return false
	}
	grace := exitGrace
	if code > 128 {
		grace = signalGrace
	}
	select {
	case <-a.terminating:
		return true
	case <-time.After(grace):
		return false
	}
}
