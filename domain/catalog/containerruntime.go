package catalog

import (
	"fmt"
	"strings"
)

// Describe says in one line what a host's container engine is, or why it
// has none, as events and refusals quote it.
func (i *ContainerRuntimeInfo) Describe() string {
	switch {
	case i == nil:
		return "container runtime not reported"
	case !i.Usable():
		why := i.Error
		if why == "" {
			why = "no engine found"
		}
		return "no container runtime: " + why
	}
	var b strings.Builder
	fmt.Fprintf(&b, "container runtime %s %s", i.Engine, i.Version)
	if i.StorageDriver != "" || i.StorageRoot != "" {
		// A new store's driver is not known until it holds an image.
		b.WriteString(" (storage ")
		if i.StorageDriver != "" {
			b.WriteString(i.StorageDriver + " ")
		}
		fmt.Fprintf(&b, "at %s, %s free)", i.StorageRoot, ApproxBytes(i.FreeBytes))
	}
	if len(i.GPUs) == 0 {
		b.WriteString(", no GPUs visible to containers")
	} else {
		fmt.Fprintf(&b, ", GPUs visible to containers: %s", strings.Join(i.GPUs, ", "))
	}
	return b.String()
}

// ApproxBytes writes a byte count the way people read one: "216 MB",
// "1.5 GB" (decimal units, as registries and engines print sizes).
func ApproxBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	if v >= 100 || v == float64(int64(v)) {
		return fmt.Sprintf("%.0f %cB", v, "kMGTP"[exp])
	}
	return fmt.Sprintf("%.1f %cB", v, "kMGTP"[exp])
}

// ContainerRuntimeInfo is what a node's agent found of its host's
// container engine when it started: the server keeps it with the node,
// `shoal location show` shows it per host, and submit refuses image jobs
// on locations whose hosts have none.
type ContainerRuntimeInfo struct {
	// Engine is "podman" or "docker"; empty when the host has no usable
	// engine, and Error then says why.
	Engine  string `json:"engine,omitempty"`
	Version string `json:"version,omitempty"`
	// StorageDriver and StorageRoot are where the engine keeps images;
	// FreeBytes is the space left there.
	StorageDriver string `json:"storage_driver,omitempty"`
	StorageRoot   string `json:"storage_root,omitempty"`
	FreeBytes     int64  `json:"free_bytes,omitempty"`
	// GPUs are the GPU devices containers can be given (CDI names, or
	// /dev/nvidia* paths).
	GPUs []string `json:"gpus,omitempty"`
	// CachedImages and CacheBytes describe the node's image cache.
	CachedImages int   `json:"cached_images,omitempty"`
	CacheBytes   int64 `json:"cache_bytes,omitempty"`
	// Error says why the host has no usable engine (not installed, not
	// reachable), in the engine's words.
	Error string `json:"error,omitempty"`
}

// Usable reports whether the host can run containers.
func (i *ContainerRuntimeInfo) Usable() bool { return i != nil && i.Engine != "" && i.Error == "" }
