// Package local is the embedded default provider: nodes are `shoal agent`
// processes on this host.
package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/shoal-ml/shoal/agent/gpu"
)

// nvidiaGPUDir lists one entry per NVIDIA GPU when the driver is loaded.
const nvidiaGPUDir = "/proc/driver/nvidia/gpus"

// DetectGPUs counts the NVIDIA GPUs of this host and says how it knows:
// nvidia-smi when the driver has it, else the driver's /proc entries.
func DetectGPUs() (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if devs, err := gpu.Query(ctx); err == nil && len(devs) > 0 {
		return len(devs), fmt.Sprintf("%d NVIDIA GPU(s) listed by nvidia-smi (%s)", len(devs), devs[0].Name)
	}
	entries, err := os.ReadDir(nvidiaGPUDir)
	if err == nil && len(entries) > 0 {
		return len(entries), fmt.Sprintf("%d NVIDIA GPU(s) found in %s", len(entries), nvidiaGPUDir)
	}
	if m, _ := filepath.Glob("/dev/nvidia[0-9]*"); len(m) > 0 {
		return len(m), fmt.Sprintf("%d NVIDIA device(s) found in /dev", len(m))
	}
	return 0, "this host has no NVIDIA GPU: " + nvidiaGPUDir + " and /dev/nvidia* are absent"
}
