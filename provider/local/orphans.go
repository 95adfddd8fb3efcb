package local

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// killNodeProcesses kills what is left of a node's jobs once its agent is
// gone. Job processes run in process groups of their own (so a timeout can
// kill a job's whole tree), which means they survive their agent when it is
// killed hard; a released machine must not keep running anything. They
// are found by the SHOAL_NODE_ID the agent puts in every job's environment.
func killNodeProcesses(nodeID string) int {
	if nodeID == "" {
		return 0
	}
	needle := []byte("SHOAL_NODE_ID=" + nodeID + "\x00")
	procs, _ := filepath.Glob("/proc/[0-9]*")
	killed := 0
	self := os.Getpid()
	for _, dir := range procs {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join(dir, "environ"))
		if err != nil || !bytes.Contains(append(env, 0), needle) {
			continue
		}
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid > 1 && pgid != syscall.Getpgrp() {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		killed++
	}
	return killed
}
