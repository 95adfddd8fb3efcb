package portowner

import (
	"os"
	"strconv"
	"strings"
)

// InContainer tells whether process pid belongs to the container id whose
// first process (as the host sees it) is initPID: pid is initPID or one of
// its descendants, and its cgroup is the container's (a path component
// naming id as podman and Docker name a container's cgroup). Both are
// asked: a PID can be reused once the container is gone, and a cgroup's
// name is chosen by whoever may create cgroups, but only the engine puts
// a process under the container's first process and in its cgroup.
func InContainer(pid int, id string, initPID int) bool {
	if pid <= 0 || initPID <= 1 || len(id) < 12 {
		return false
	}
	return descends(pid, initPID) && inContainerCgroup(pid, id)
}

// descends tells whether pid is ancestor or one of its descendants.
func descends(pid, ancestor int) bool {
	for seen := 0; pid > 1 && seen < 4096; seen++ {
		if pid == ancestor {
			return true
		}
		pid = parentPID(pid)
	}
	return false
}

// parentPID is pid's parent, 0 when it cannot be read.
func parentPID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "PPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(rest))
			return n
		}
	}
	return 0
}

// inContainerCgroup tells whether one of pid's cgroup paths has a
// component that is container id's cgroup: "libpod-<id>.scope" (podman,
// systemd), "libpod-<id>" (podman, cgroupfs), "docker-<id>.scope"
// (Docker, systemd) or "<id>" (Docker, cgroupfs).
func inContainerCgroup(pid int, id string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	names := map[string]bool{"libpod-" + id + ".scope": true, "libpod-" + id: true, "docker-" + id + ".scope": true, id: true}
	for _, line := range strings.Split(string(b), "\n") {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[2], "/") {
			if names[c] {
				return true
			}
		}
	}
	return false
}
