package agent

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal/agent/gpu"
	"github.com/shoal-ml/shoal/agent/runas"
)

// Under --preempt-on-sigterm, a rank that ends while the agent itself is
// being stopped was taken back with its machine: preempted, whether a
// signal killed it or it exited (a job that checkpoints on SIGTERM and
// exits 0, a shell that ran on after its child was killed). A rank that
// ends while the agent goes on, or any rank without the flag, is not.
func TestTakenBack(t *testing.T) {
	a, err := newAgent(Config{Accounts: runas.Unisolated(), NodeID: "n", WorkDir: t.TempDir(), PreemptOnSignal: true})
	if err != nil {
		t.Fatal(err)
	}
	close(a.terminating)
	if !a.takenBack("failed", 143) {
		t.Error("SIGTERM while the agent stops: not taken back")
	}
	if !a.takenBack("failed", 1) || !a.takenBack("completed", 0) {
		t.Error("a rank that exited while the agent stops: not taken back")
	}
	if a.takenBack("timeout", 143) || a.takenBack("canceled", 143) {
		t.Error("a rank the job's own timeout or a cancel ended: taken back")
	}
	going, err := newAgent(Config{Accounts: runas.Unisolated(), NodeID: "n", WorkDir: t.TempDir(), PreemptOnSignal: true})
	if err != nil {
		t.Fatal(err)
	}
	if going.takenBack("failed", 1) || going.takenBack("completed", 0) || going.takenBack("failed", 143) {
		t.Error("a rank that ended while the agent goes on: taken back")
	}
	plain, err := newAgent(Config{Accounts: runas.Unisolated(), NodeID: "n", WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	close(plain.terminating)
	if plain.takenBack("failed", 143) {
		t.Error("without PreemptOnSignal: taken back")
	}
}

// A node's GPU samples hold its own devices: those the provider gave it,
// else those its batch system did (CUDA_VISIBLE_DEVICES by index or UUID).
func TestSampledDevicesAreTheNodes(t *testing.T) {
	devs := []gpu.Device{{Index: 0, UUID: "GPU-a"}, {Index: 1, UUID: "GPU-b"}, {Index: 2, UUID: "GPU-c"}}
	pick := func(a *Agent) (out []int) {
		for _, d := range devs {
			if a.mine(d) {
				out = append(out, d.Index)
			}
		}
		return out
	}
	a, _ := newAgent(Config{Accounts: runas.Unisolated(), NodeID: "n", WorkDir: t.TempDir(), GPUDevices: "1,2"})
	if got := pick(a); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("--gpus 1,2: %v", got)
	}
	t.Setenv("CUDA_VISIBLE_DEVICES", "GPU-c")
	b, _ := newAgent(Config{Accounts: runas.Unisolated(), NodeID: "n", WorkDir: t.TempDir()})
	if got := pick(b); len(got) != 1 || got[0] != 2 {
		t.Errorf("CUDA_VISIBLE_DEVICES=GPU-c: %v", got)
	}
	// A host without a driver is asked once and never sampled.
	calls := 0
	b.gpus = &gpuProbe{query: func(context.Context) ([]gpu.Device, error) { calls++; return nil, gpu.ErrNoDriver }}
	if b.gpus.available(context.Background()) || b.gpus.available(context.Background()) || calls != 1 {
		t.Errorf("a host without nvidia-smi: available, or asked %d times", calls)
	}
}
