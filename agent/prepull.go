package agent

import (
	"context"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
)

// prepullState is the node's pre-pull of its cluster's images: running
// from the join until the pulls end, then a report the sync loop sends
// until the server has it.
type prepullState struct {
	mu     sync.Mutex
	report *compute.PrepullReport
}

// take returns the report to send, nil when there is none.
func (p *prepullState) take() *compute.PrepullReport {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.report
}

// sent forgets rep once a sync carrying it succeeded.
func (p *prepullState) sent(rep *compute.PrepullReport) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.report == rep {
		p.report = nil
	}
}

// prepull pulls the join's images one after another (the node syncs
// meanwhile, and gets no work until it reports) and leaves the report
// for the sync loop. A failed pull is reported with the engine's or the
// registry's words and ends nothing: the node takes work anyway.
func (a *Agent) prepull(ctx context.Context, order *compute.PrepullOrder) {
	began := time.Now()
	rep := &compute.PrepullReport{}
	// prepareImage lists the insecure registries with the engine and
	// starts a private podman service when none runs yet.
	task := &node.ContainerTask{Registries: order.Registries}
	for _, image := range order.Images {
		a.log.Info("pre-pulling an image of the cluster", "image", image)
		if _, err := a.ctr.PrepareImage(ctx, ctrhost.ImageJob{Env: &asset.EnvironmentSpec{Image: image}, Task: task,
			Progress: func(string) {}, Log: func(string) {}}); err != nil {
			a.log.Warn("pre-pulling an image failed", "image", image, "err", err)
			rep.Failed = append(rep.Failed, compute.PrepullFailure{Image: image, Error: err.Error()})
			continue
		}
		rep.Pulled = append(rep.Pulled, image)
	}
	rep.Seconds = time.Since(began).Seconds()
	a.prepulls.mu.Lock()
	a.prepulls.report = rep
	a.prepulls.mu.Unlock()
	a.log.Info("pre-pulls ended", "pulled", len(rep.Pulled), "failed", len(rep.Failed), "seconds", rep.Seconds)
}
