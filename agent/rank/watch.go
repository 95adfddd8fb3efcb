package rank

import (
	"context"
	"time"

	"github.com/shoal-ml/shoal/agent/files"
	"github.com/shoal-ml/shoal/agent/runner"
	"github.com/shoal-ml/shoal/domain/node"
)

// watch follows a rank whose processes still run runningReportDelay
// after they started: it reports them Running, ships their log as it
// grows and samples the node's GPUs for them until they end, and returns
// how they ended. shipCtx is what the shipper, the sampler and the
// services (stopServices) run under; stopShip ends it.
func (r *Rank) watch(ctx, shipCtx context.Context, run rankProcs, ship *files.LogShipper, stopServices, stopShip func()) runner.Result {
	runningCtx, stopRunning := context.WithCancel(ctx)
	reported := make(chan struct{})
	go func() {
		defer close(reported)
		select {
		case <-run.Done():
			return
		case <-runningCtx.Done():
			return
		default:
		}
		r.report(runningCtx, &node.RankReport{State: node.RankRunning})
	}()
	shipped := make(chan struct{})
	go func() {
		defer close(shipped)
		ship.Loop(shipCtx)
	}()
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		r.n.Agent.SampleGPUs(shipCtx, r.t.RankRef)
	}()
	res := run.Wait()
	stopServices()
	stopShip()
	<-shipped
	<-sampled
	// A quick job may end before its Running report is through: give the
	// report a moment (the server records the start), then give up on it
	// — the final report carries the start time too.
	select {
	case <-reported:
	case <-time.After(runningReportGrace):
	}
	stopRunning()
	<-reported
	return res
}
