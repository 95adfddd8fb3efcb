package agent

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/agent/gpu"
	"github.com/shoal-ml/shoal/domain/node"
)

// gpuProbe remembers whether this host has GPUs nvidia-smi can report:
// hosts without a driver are asked once, not every rank.
type gpuProbe struct {
	once  sync.Once
	query func(context.Context) ([]gpu.Device, error)
	has   bool
}

func (p *gpuProbe) available(ctx context.Context) bool {
	p.once.Do(func() {
		devs, err := p.query(ctx)
		p.has = err == nil && len(devs) > 0
	})
	return p.has
}

// mine says which of the host's devices belong to this node: those the
// provider gave it (--gpus), else those its batch system did
// (CUDA_VISIBLE_DEVICES, by index or UUID), else all of them.
func (a *Agent) mine(d gpu.Device) bool {
	list := a.cfg.GPUDevices
	if list == "" {
		list = os.Getenv("CUDA_VISIBLE_DEVICES")
	}
	if list == "" {
		return true
	}
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		if v == strconv.Itoa(d.Index) || (d.UUID != "" && v == d.UUID) {
			return true
		}
	}
	return false
}

// sampleGPUs reports the node's GPUs' utilisation every interval until
// ctx ends, while a rank runs. Failures are logged once and skipped: a
// sample is worth less than the job.
func (a *Agent) sampleGPUs(ctx context.Context, ref node.RankRef) {
	interval := time.Duration(0)
	if a.join != nil {
		interval = a.join.GPUSampleInterval
	}
	if interval <= 0 || !a.gpus.available(ctx) {
		return
	}
	warned := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		devs, err := a.gpus.query(ctx)
		s := &node.GPUSample{Time: a.now()}
		for _, d := range devs {
			if a.mine(d) {
				s.Devices = append(s.Devices, node.GPUDeviceUsage{Index: d.Index, Name: d.Name, UtilizationPercent: d.Utilization})
			}
		}
		if err == nil && len(s.Devices) > 0 {
			err = a.client.GPUSample(ctx, ref, s)
		}
		if err != nil && ctx.Err() == nil && !warned {
			a.log.Warn("sampling the GPUs failed", "attempt", ref.AttemptID, "err", err)
			warned = true
		}
	}
}
