// Package local is the embedded default provider: nodes are `shoal agent`
// processes on this host.
package local

import (
	"fmt"
	"os"
	"path/filepath"
)

// nvidiaGPUDir lists one entry per NVIDIA GPU when the driver is loaded.
const nvidiaGPUDir = "/proc/driver/nvidia/gpus"

// DetectGPUs counts the NVIDIA GPUs of this host and says how it knows.
func DetectGPUs() (int, string) {
	entries, err := os.ReadDir(nvidiaGPUDir)
	if err == nil && len(entries) > 0 {
		return len(entries), fmt.Sprintf("%d NVIDIA GPU(s) found in %s", len(entries), nvidiaGPUDir)
	}
	if m, _ := filepath.Glob("/dev/nvidia[0-9]*"); len(m) > 0 {
		return len(m), fmt.Sprintf("%d NVIDIA device(s) found in /dev", len(m))
	}
	return 0, "this host has no NVIDIA GPU: " + nvidiaGPUDir + " and /dev/nvidia* are absent"
}
