// Package procs finds the `shoal agent` processes a bench started, by
// the directory their command line names (a node's --work-dir lies under
// the bench's data dir).
package procs

import (
	"os"
	"strconv"
	"strings"
)

// Agents lists the pids of live `shoal agent` processes whose command
// line names dir.
func Agents(dir string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) > 1 && args[1] == "agent" && strings.Contains(string(b), dir) {
			out = append(out, pid)
		}
	}
	return out
}
