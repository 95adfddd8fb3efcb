package sshpool

import (
	"context"
	"errors"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/shoal-ml/shoal/agent/gpu"
)

// detected is what nvidia-smi said of a host with gpus: auto.
type detected struct {
	count int
	model string
}

// nvidiaSMI is the query run on a host with gpus: auto: nvidia-smi's
// machine-readable CSV, which gpu.Parse reads.
const nvidiaSMI = "nvidia-smi --query-gpu=" + gpu.QueryFields + " --format=csv,noheader,nounits"

// gpuCountLocked is host i's GPU count: declared, or detected (0 until
// detection succeeds). p.mu is held.
func (p *Provider) gpuCountLocked(i int) int {
	h := p.cfg.Hosts[i]
	if !h.DetectGPUs {
		return h.GPUs
	}
	return p.gpus[i].count
}

// detectGPUs asks the hosts with gpus: auto that have not answered yet
// for their GPUs. A host without nvidia-smi has none, which is recorded;
// a host that cannot be reached is asked again next time.
func (p *Provider) detectGPUs(ctx context.Context) {
	for i, h := range p.cfg.Hosts {
		p.mu.Lock()
		_, done := p.gpus[i]
		p.mu.Unlock()
		if !h.DetectGPUs || done {
			continue
		}
		c, err := p.dial(ctx, i)
		if err != nil {
			p.log.Warn("cannot ask a host for its GPUs", "host", h.Address, "err", err)
			continue
		}
		d, err := queryGPUs(c)
		c.Close()
		if err != nil {
			p.log.Warn("nvidia-smi failed on a host; it counts as having no GPUs", "host", h.Address, "err", err)
		}
		p.mu.Lock()
		p.gpus[i] = d
		p.mu.Unlock()
		p.log.Info("GPUs detected", "host", h.Address, "gpus", d.count, "model", d.model)
	}
}

// queryGPUs runs nvidia-smi on the host. No nvidia-smi (exit status 127)
// is no GPUs, without an error.
func queryGPUs(c *ssh.Client) (detected, error) {
	s, err := c.NewSession()
	if err != nil {
		return detected{}, err
	}
	defer s.Close()
	var stderr strings.Builder
	s.Stderr = &stderr
	out, err := s.Output(nvidiaSMI)
	if err != nil {
		var ee *ssh.ExitError
		if errors.As(err, &ee) && ee.ExitStatus() == 127 {
			return detected{}, nil
		}
		return detected{}, errors.New(strings.TrimSpace(err.Error() + ": " + stderr.String()))
	}
	devs, err := gpu.Parse(string(out))
	if err != nil {
		return detected{}, err
	}
	d := detected{count: len(devs)}
	if len(devs) > 0 {
		d.model = devs[0].Name
	}
	return d, nil
}
