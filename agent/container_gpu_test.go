//go:build gpu

package agent

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/agent/files"
)

// TestContainerGPUsOnAGPUHost runs only on a host with NVIDIA GPUs and
// podman with runc, built with -tags gpu by scripts/gpu-check (CI has no
// GPU; TestGPUDevices covers the rule with stand-in devices there). A
// container a node with GPU 0 starts, by the agent's own rule
// (ctrhost.GPUDevices over what the engine reports), sees that device and the
// control devices and CUDA_VISIBLE_DEVICES=0, and no other GPU.
// SHOAL_GPU_TEST_ROOTFS is a root file system tarball with /bin/sh
// (scripts/gpu-check makes one from busybox).
func TestContainerGPUsOnAGPUHost(t *testing.T) {
	rootfs := os.Getenv("SHOAL_GPU_TEST_ROOTFS")
	if rootfs == "" {
		t.Fatal("SHOAL_GPU_TEST_ROOTFS is not set: run this through scripts/gpu-check")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Short paths: podman refuses a run root of more than 50 bytes.
	dir, err := os.MkdirTemp("", "sgpu-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := container.PodmanConfig{Dir: filepath.Join(dir, "p"), Root: filepath.Join(dir, "root"), RunRoot: filepath.Join(dir, "run")}
	p, err := container.StartPodman(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cli := exec.CommandContext(ctx, "podman", "--runtime", "runc", "--root", cfg.Root, "--runroot", cfg.RunRoot,
		"--tmpdir", container.TmpDir(cfg.Dir), "import", rootfs, "localhost/shoal-gpu-test:1")
	cli.Env = append(os.Environ(), "CONTAINERS_CONF="+filepath.Join(cfg.Dir, "containers.conf"))
	if out, err := cli.CombinedOutput(); err != nil {
		t.Fatalf("podman import: %v: %s", err, out)
	}
	e, err := container.Open(ctx, container.Config{Host: p.Host, EnginePID: p.PID()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	info, err := e.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("engine %s %s, GPUs %+v", info.Engine, info.Version, info.GPUs)
	devs, visible := ctrhost.GPUDevices("0", info.GPUs, files.Exists)
	if len(devs) == 0 || visible != "0" {
		t.Fatalf("devices for GPU 0: %+v, CUDA_VISIBLE_DEVICES %q; want the device and 0", devs, visible)
	}
	var out bytes.Buffer
	id, err := e.Run(ctx, container.Spec{
		Image: "localhost/shoal-gpu-test:1", Entrypoint: []string{"/bin/sh", "-c", "ls /dev; echo visible=$CUDA_VISIBLE_DEVICES"},
		Env: map[string]string{"CUDA_VISIBLE_DEVICES": visible}, Devices: devs, Network: "host", User: "65534:65534",
		Stdout: &out, Stderr: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	code, err := e.Wait(ctx, id)
	_ = e.Remove(ctx, id)
	if err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s", code, err, out.String())
	}
	got := out.String()
	t.Logf("in the container:\n%s", got)
	for _, want := range []string{"nvidia0\n", "nvidiactl\n", "visible=0\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the container's /dev and env lack %q:\n%s", strings.TrimSpace(want), got)
		}
	}
	if strings.Contains(got, "nvidia1\n") {
		t.Errorf("the container sees a GPU the node does not own:\n%s", got)
	}
}
