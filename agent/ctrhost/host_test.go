package ctrhost

import (
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/domain/node"
)

// A container gets its node's GPUs only, renumbered from 0: CDI devices
// where the host declares them, else the /dev/nvidia<N> nodes and the
// control nodes that exist.
func TestGPUDevices(t *testing.T) {
	exists := func(p string) bool {
		return p == "/dev/nvidia2" || p == "/dev/nvidia3" || p == "/dev/nvidiactl" || p == "/dev/nvidia-uvm"
	}
	nodes := container.GPUs{DevNodes: []string{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"}}
	devs, visible := GPUDevices("2,3", nodes, exists)
	want := []container.Device{{Path: "/dev/nvidia2"}, {Path: "/dev/nvidia3"}, {Path: "/dev/nvidiactl"}, {Path: "/dev/nvidia-uvm"}}
	if !reflect.DeepEqual(devs, want) || visible != "0,1" {
		t.Errorf("device nodes: %v %q", devs, visible)
	}
	cdi := container.GPUs{CDI: []string{"nvidia.com/gpu=0", "nvidia.com/gpu=1", "nvidia.com/gpu=all"}}
	devs, visible = GPUDevices("1", cdi, exists)
	if !reflect.DeepEqual(devs, []container.Device{{Path: "nvidia.com/gpu=1", CDI: true}}) || visible != "0" {
		t.Errorf("CDI: %v %q", devs, visible)
	}
	devs, visible = GPUDevices("", cdi, exists)
	if len(devs) != 2 || visible != "0,1" {
		t.Errorf("all of the host's: %v %q", devs, visible)
	}
	if devs, visible := GPUDevices("", container.GPUs{}, exists); devs != nil || visible != "" {
		t.Errorf("no GPUs: %v %q", devs, visible)
	}
}

// Preparing reports go out on each change of phase at once, and within a
// phase at most once per interval.
func TestProgressReporterRateLimits(t *testing.T) {
	now := time.Unix(0, 0)
	var mu sync.Mutex
	var sent []string
	p := &ProgressReporter{Interval: 2 * time.Second, Now: func() time.Time { return now },
		Send: func(r string) { mu.Lock(); sent = append(sent, r); mu.Unlock() }}
	p.Report("pulling a")
	p.Report("pulling a — 1 of 10 MB")
	now = now.Add(time.Second)
	p.Report("pulling a — 2 of 10 MB")
	now = now.Add(1500 * time.Millisecond)
	p.Report("pulling a — 5 of 10 MB")
	p.Report("building b")
	want := []string{"pulling a", "pulling a — 5 of 10 MB", "building b"}
	if !reflect.DeepEqual(sent, want) {
		t.Errorf("sent %q, want %q", sent, want)
	}
}

// The private podman service's run root stays within podman's 50 bytes
// however deep the node's work dir (the nodes dir of a server as root is
// /var/lib/shoal-nodes/<server>/<node>), and differs per node.
func TestPodmanRunRootIsShort(t *testing.T) {
	a := PodmanRunRoot("/var/lib/shoal-nodes/shoal-bd36762a/cpu-cluster-n1/podman")
	b := PodmanRunRoot("/var/lib/shoal-nodes/shoal-bd36762a/cpu-cluster-n2/podman")
	if len(a) > 50 || len(b) > 50 || a == b {
		t.Errorf("run roots %q (%d) and %q (%d): want two of at most 50 bytes", a, len(a), b, len(b))
	}
}

// An engine that cannot start on the node fails the job with its words:
// as node loss it was requeued onto the same engine twenty times.
func TestRuntimeMissingFailsTheJob(t *testing.T) {
	err := &container.Error{Kind: container.ErrRuntimeMissing, Op: "start podman service", Msg: "the specified runroot is longer than 50 characters"}
	if state, failure := ImageFailure(err); state != node.RankFailed || failure != node.RankImageFailed {
		t.Errorf("ImageFailure = %s, %s; want Failed, image_failed", state, failure)
	}
}

// A registry the node cannot reach fails the job with the registry's
// words: the image cannot be got, and as node loss it was requeued
// twenty times onto nodes that met the same.
func TestUnreachableRegistryFailsTheJob(t *testing.T) {
	err := &container.Error{Kind: container.ErrUnreachable, Op: "pull reg1.example.invalid/x:1", Msg: "dial tcp: lookup reg1.example.invalid: no such host"}
	if state, failure := ImageFailure(err); state != node.RankFailed || failure != node.RankImageFailed {
		t.Errorf("ImageFailure = %s, %s; want Failed, image_failed", state, failure)
	}
	other := &container.Error{Kind: errors.New("engine error"), Op: "pull x", Msg: "unexpected EOF"}
	if state, failure := ImageFailure(other); state != node.RankLost || failure != node.RankPrepareFailed {
		t.Errorf("an engine that broke mid-pull: ImageFailure = %s, %s; want the node's failure (Lost, prepare_failed)", state, failure)
	}
}
