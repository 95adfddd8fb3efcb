package gpu_test

import (
	"testing"

	"github.com/shoal-ml/shoal/agent/gpu"
)

// nvidia-smi's output on a host with two A100s (the form Query asks for).
const twoA100 = `0, GPU-4b5c6d7e-1111-2222-3333-444455556666, NVIDIA A100-SXM4-40GB, 40960, 87
1, GPU-8f9e0d1c-7777-8888-9999-aaaabbbbcccc, NVIDIA A100-SXM4-40GB, 40960, [N/A]
`

func TestParse(t *testing.T) {
	devs, err := gpu.Parse(twoA100)
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 2 || devs[0].Index != 0 || devs[1].Index != 1 || devs[0].Name != "NVIDIA A100-SXM4-40GB" ||
		devs[0].MemoryMiB != 40960 || devs[0].Utilization != 87 || devs[1].Utilization != 0 || devs[1].UUID == "" {
		t.Fatalf("parsed %+v", devs)
	}
	if devs, err := gpu.Parse(""); err != nil || len(devs) != 0 {
		t.Fatalf("no GPUs: %v %v", devs, err)
	}
	for _, bad := range []string{"0, GPU-x, name\n", "x, GPU-x, n, 1, 2\n", "0, GPU-x, n, lots, 2\n"} {
		if _, err := gpu.Parse(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
