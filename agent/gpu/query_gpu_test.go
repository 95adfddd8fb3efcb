//go:build gpu

package gpu_test

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal/agent/gpu"
)

// TestQueryOnAGPUHost runs on a host with NVIDIA GPUs only: CI machines
// have none, so it is built with -tags gpu, by scripts/gpu-check.
func TestQueryOnAGPUHost(t *testing.T) {
	devs, err := gpu.Query(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) == 0 {
		t.Fatal("nvidia-smi lists no GPU")
	}
	for _, d := range devs {
		if d.UUID == "" || d.MemoryMiB <= 0 {
			t.Errorf("device %+v", d)
		}
	}
	t.Logf("%d GPU(s): %+v", len(devs), devs)
}
