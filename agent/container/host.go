package container

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
	"gopkg.in/yaml.v3"
)

// cdiSpecDirs are where CDI specs live (the CDI specification's
// defaults): nvidia-ctk writes the GPUs' spec there.
var cdiSpecDirs = []string{"/etc/cdi", "/var/run/cdi"}

// hardLimits are the hard limits for the ulimits a Spec defaults: this
// process's, lowered to the engine process's (pid, when not 0). An
// engine's own defaults (podman's nofile is 1048576) can exceed them,
// and the OCI runtime then refuses to start the container.
func hardLimits(pid int) (map[string]int64, error) {
	limits := map[string]int64{}
	for name, res := range map[string]int{"nofile": unix.RLIMIT_NOFILE, "nproc": unix.RLIMIT_NPROC} {
		var rl unix.Rlimit
		if err := unix.Prlimit(pid, res, nil, &rl); err != nil {
			return nil, fmt.Errorf("read the %s limit of process %d: %w", name, pid, err)
		}
		own := clampLimit(rl.Max)
		if pid != 0 {
			if err := unix.Getrlimit(res, &rl); err != nil {
				return nil, fmt.Errorf("read this host's %s limit: %w", name, err)
			}
			if mine := clampLimit(rl.Max); mine >= 0 && (own < 0 || mine < own) {
				own = mine
			}
		}
		limits[name] = own
	}
	return limits, nil
}

// clampLimit makes an rlimit an int64 (RLIM_INFINITY is all ones).
func clampLimit(v uint64) int64 {
	if v > 1<<62 {
		return -1 // unlimited
	}
	return int64(v)
}

// freeBytes is the free space under dir, -1 when dir is not on this
// host.
func freeBytes(dir string) int64 {
	var st unix.Statfs_t
	if dir == "" || unix.Statfs(dir, &st) != nil {
		return -1
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// devNvidia matches the per-GPU device nodes, not the control ones.
var devNvidia = regexp.MustCompile(`^nvidia[0-9]+$`)

// hostGPUs lists the CDI devices the specs in cdiDirs declare and the
// /dev/nvidia<N> nodes under devDir.
func hostGPUs(cdiDirs []string, devDir string) (GPUs, error) {
	var g GPUs
	for _, dir := range cdiDirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // no CDI spec here
		}
		for _, ent := range entries {
			ext := filepath.Ext(ent.Name())
			if ext != ".yaml" && ext != ".json" {
				continue
			}
			names, err := cdiDevices(filepath.Join(dir, ent.Name()))
			if err != nil {
				return g, err
			}
			g.CDI = append(g.CDI, names...)
		}
	}
	if entries, err := os.ReadDir(devDir); err == nil {
		for _, ent := range entries {
			if devNvidia.MatchString(ent.Name()) {
				g.DevNodes = append(g.DevNodes, filepath.Join(devDir, ent.Name()))
			}
		}
	}
	slices.Sort(g.CDI)
	slices.Sort(g.DevNodes)
	return g, nil
}

// cdiSpec is the part of a CDI spec that names its devices (YAML is a
// superset of JSON, so one decoder reads both).
type cdiSpec struct {
	Kind    string `yaml:"kind"`
	Devices []struct {
		Name string `yaml:"name"`
	} `yaml:"devices"`
}

// cdiDevices reads one CDI spec's fully qualified device names
// ("nvidia.com/gpu=0").
func cdiDevices(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read CDI spec: %w", err)
	}
	var spec cdiSpec
	if err := yaml.Unmarshal(data, &spec); err != nil {
		return nil, fmt.Errorf("CDI spec %s: %w", path, err)
	}
	if !strings.Contains(spec.Kind, "/") {
		return nil, fmt.Errorf("CDI spec %s: kind %q must be vendor/class", path, spec.Kind)
	}
	var names []string
	for _, d := range spec.Devices {
		names = append(names, spec.Kind+"="+d.Name)
	}
	return names, nil
}

// HostGPUs lists the GPUs this host can give containers (the CDI devices
// its specs declare, the /dev/nvidia<N> nodes), without asking an
// engine: an agent whose podman service has not started yet reports
// them all the same.
func HostGPUs() (GPUs, error) { return hostGPUs(cdiSpecDirs, "/dev") }
