package local

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/catalog"
)

var _ catalog.HostLister = (*Provider)(nil)

// Hosts returns this machine: every node of the local provider runs here.
func (p *Provider) Hosts(ctx context.Context) ([]*catalog.Host, error) {
	name, _ := os.Hostname()
	gpus, _ := DetectGPUs()
	return []*catalog.Host{{
		Name: name, Address: "127.0.0.1", Kind: "provider", VCPUs: runtime.NumCPU(), MemoryGB: memoryGB(),
		GPUs: gpus, State: catalog.HostReady,
	}}, nil
}

// memoryGB reads the machine's memory from /proc/meminfo (0 when unknown).
func memoryGB() float64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, _ := strconv.ParseFloat(fields[1], 64)
			return float64(int(kb/1024/1024*10)) / 10
		}
	}
	return 0
}
