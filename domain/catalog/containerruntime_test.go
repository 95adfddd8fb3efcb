package catalog

import "testing"

// A runtime is described with its store; a new store's driver, unknown
// until it holds an image, is left out rather than printed empty.
func TestDescribeContainerRuntime(t *testing.T) {
	for _, tc := range []struct {
		info ContainerRuntimeInfo
		want string
	}{
		{ContainerRuntimeInfo{Engine: "podman", Version: "4.3.1", StorageDriver: "overlay", StorageRoot: "/s", FreeBytes: 1_500_000_000},
			"container runtime podman 4.3.1 (storage overlay at /s, 1.5 GB free), no GPUs visible to containers"},
		{ContainerRuntimeInfo{Engine: "podman", Version: "4.3.1", StorageRoot: "/s", FreeBytes: 2_000},
			"container runtime podman 4.3.1 (storage at /s, 2 kB free), no GPUs visible to containers"},
		{ContainerRuntimeInfo{Engine: "docker", Version: "27.0", GPUs: []string{"nvidia.com/gpu=0"}},
			"container runtime docker 27.0, GPUs visible to containers: nvidia.com/gpu=0"},
	} {
		if got := tc.info.Describe(); got != tc.want {
			t.Errorf("Describe() = %q, want %q", got, tc.want)
		}
	}
}
