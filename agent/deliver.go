package agent

import (
	"context"

	"github.com/shoal-ml/shoal/agent/files"
)

// deliver sends one result (see files.Outbox.Deliver); a report that freed
// the node may bring its next task, which starts at once. accepted says
// the server took the result (not refused it).
func (a *Agent) deliver(ctx context.Context, p *files.Result) (accepted bool, err error) {
	resp, err := a.outbox.Deliver(ctx, a.client, p, a.accounts != nil && a.accounts.Isolated(), a.reportsTakeLog.Load(), a.log)
	if resp != nil {
		a.reportsTakeLog.Store(resp.ReportsTakeLog)
		for _, t := range resp.Start {
			a.startRank(ctx, t)
		}
	}
	return resp != nil, err
}

// deliverLoop delivers waiting results until ctx ends, at once when one is
// added and with backoff while the server does not answer.
func (a *Agent) deliverLoop(ctx context.Context) {
	b := newBackoff(MinRetryInterval, MaxRetryInterval, a.rand)
	for {
		failed := false
		for _, p := range a.outbox.List() {
			if ctx.Err() != nil {
				return
			}
			if !a.outbox.Claim(p.Ref) {
				continue
			}
			accepted, err := a.deliver(ctx, p)
			a.outbox.Unclaim(p.Ref)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				a.outage.failed("report result", err)
				failed = true
				break
			}
			a.outage.succeeded()
			if accepted {
				// Delivered late (the rank's own delivery did not get
				// through, or an earlier agent left it): the rank's
				// "rank ended" line said it was not delivered; this
				// says it is. (A refusal has its own line, Deliver's.)
				a.log.Info("result reported", "job", p.JobName, "attempt", p.Ref.AttemptID, "rank", p.Ref.Rank, "state", p.Report.State)
			}
		}
		var wait <-chan struct{}
		if failed {
			d := b.next()
			t := a.after(d)
			wait = t
		} else {
			b.reset()
		}
		select {
		case <-ctx.Done():
			return
		case <-a.outbox.Wake():
		case <-wait:
		}
	}
}
