package local

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// The host's GPUs are shared out between its GPU nodes: each gets devices
// of its own (a 1-GPU node on a 4-GPU host gets one of devices 0–3), and
// its agent's jobs see only those (--gpus → CUDA_VISIBLE_DEVICES).

// reserveGPUs gives node id want devices of the host's Config.GPUs and
// returns them, and whether they were reserved just now (not held by the
// node already), or EQUOTA when too few are free. A host with no GPUs (or
// emulated ones) gives none and refuses nothing: the location's GPU rules
// decided already whether GPU sizes are welcome.
func (p *Provider) reserveGPUs(id string, want int) ([]int, bool, error) {
	if want <= 0 || p.cfg.GPUs <= 0 {
		return nil, false, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if got, ok := p.devices[id]; ok {
		return got, false, nil // a revived node keeps its devices
	}
	taken := map[int]bool{}
	for _, ds := range p.devices {
		for _, d := range ds {
			taken[d] = true
		}
	}
	var got []int
	for d := 0; d < p.cfg.GPUs && len(got) < want; d++ {
		if !taken[d] {
			got = append(got, d)
		}
	}
	if len(got) < want {
		return nil, false, core.Errorf(core.EQUOTA, "out of capacity: node %s needs %d GPU(s); this host has %d, %d free", id, want, p.cfg.GPUs, p.cfg.GPUs-len(taken))
	}
	p.devices[id] = got
	return got, true, nil
}

// freeGPUs gives node id's devices back.
func (p *Provider) freeGPUs(id string) {
	p.mu.Lock()
	delete(p.devices, id)
	p.mu.Unlock()
}

// adoptGPUs records the devices of an agent found running after a
// restart, read from its command line (--gpus 0,1).
func (p *Provider) adoptGPUs(id string, pid int) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return
	}
	args := strings.Split(string(b), "\x00")
	i := slices.Index(args, "--gpus")
	if i < 0 || i+1 >= len(args) {
		return
	}
	var ds []int
	for _, f := range strings.Split(args[i+1], ",") {
		if d, err := strconv.Atoi(f); err == nil {
			ds = append(ds, d)
		}
	}
	p.mu.Lock()
	p.devices[id] = ds
	p.mu.Unlock()
}

// gpuArgs is the agent's --gpus flag for devices.
func gpuArgs(devices []int) []string {
	if len(devices) == 0 {
		return nil
	}
	s := make([]string, len(devices))
	for i, d := range devices {
		s[i] = strconv.Itoa(d)
	}
	return []string{"--gpus", strings.Join(s, ",")}
}
