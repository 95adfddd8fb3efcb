package local

import (
	"syscall"

	"github.com/shoal-ml/shoal/internal/procmark"
)

// killNodeProcesses kills what is left of a node's jobs and instance
// sessions once its agent is gone. Job processes run in process groups of
// their own (so a timeout can kill a job's whole tree), which means they
// survive their agent when it is killed hard; a released machine must not
// keep running anything. They are found by the node ID and work dir the
// agent puts in every process's environment (see internal/procmark): by
// the ID alone, releasing an instance would also kill the processes of
// another server's instance of the same name on this host.
func killNodeProcesses(nodeID, dir string) int {
	killed := 0
	self := syscall.Getpgrp()
	for _, pid := range procmark.FindNode(nodeID, dir) {
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid > 1 && pgid != self {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		killed++
	}
	return killed
}
