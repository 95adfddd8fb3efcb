package testk8s

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// A killed test process's cgroup root goes, with what is under it; a
// running process's (this one's, or PID 1's) stays.
func TestRemoveStaleCgroupsKeepsThoseOfLiveProcesses(t *testing.T) {
	mount := t.TempDir() // plain directories stand in for a hierarchy
	dead := filepath.Join(mount, "shoal-testk8s-2147483647")
	live := []string{filepath.Join(mount, "shoal-testk8s-1"), filepath.Join(mount, "shoal-testk8s-"+strconv.Itoa(os.Getpid()))}
	other := filepath.Join(mount, "someone-else")
	for _, d := range append(live, filepath.Join(dead, "kubepods", "burstable"), other) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleCgroups(mount)
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead process's cgroup root: %v, want it removed", err)
	}
	for _, d := range append(live, other) {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s: %v, want it kept", d, err)
		}
	}
}
