//go:build gpu

package e2e_test

import (
	"strings"
	"testing"
	"time"
)

// TestOnAGPUHost runs only on a host with NVIDIA GPUs, built with -tags
// gpu by scripts/gpu-check: CI machines have no GPU (there the same path
// runs on a pool host with a stand-in nvidia-smi, TestSSHPoolGPUs). The
// local location reports the host's GPUs, a GPU size schedules, the job
// sees only its node's device, and its events carry utilisation samples.
func TestOnAGPUHost(t *testing.T) {
	s := startServer(t, serverOpts{Config: fastJobsConfig + "gpu_sample_interval: 1s\n"})
	loc := runJSON[map[string]any](t, s.env, "location", "show", "-n", "local", "-o", "json")
	if gpus, _ := loc["gpus"].(map[string]any); gpus["available"] != true {
		t.Fatalf("the local location's GPUs: %v; want available (nvidia-smi lists devices)", loc["gpus"])
	}
	createCluster(t, s, "gpu-cluster", "--size", "Standard_NC6s_v3", "--max-instances", "1")
	name := submitJob(t, s, writeJobFile(t, "type: command\ncommand: echo devices $CUDA_VISIBLE_DEVICES; nvidia-smi -L; sleep 4\ncompute: azureml:gpu-cluster\n"))
	waitJob(t, s, name, 120*time.Second, "Completed")
	log := jobLog(t, s, name)
	if !strings.Contains(log, "devices 0\n") || !strings.Contains(log, "GPU ") {
		t.Errorf("the job's devices and nvidia-smi -L: %q; want device 0 only", log)
	}
	evs := runJSON[[]map[string]any](t, s.env, "job", "events", "-n", name, "-o", "json")
	found := false
	for _, e := range evs {
		if e["kind"] == "gpu_utilization" && strings.Contains(jsonStr(e["reason"]), "GPU 0 ") {
			found = true
		}
	}
	if !found {
		t.Errorf("no GPU utilisation sample among the job's events: %v", evs)
	}
}
