package appproxy

import (
	"github.com/shoal-ml/shoal/internal/portowner"
	"github.com/shoal-ml/shoal/internal/procmark"
)

// appOwner says whose listener the application proxy may reach: an
// application the instance runs as a process carries the instance node's
// mark (and, when its agent switches accounts, runs as the instance
// user's uid); one that runs from an image is a process of the container
// its agent started (containerID, its first process containerPID), whose
// uid and environment are the image's.
type appOwner struct {
	// whose names the owner in refusals ("the job's rank"); "" is an
	// instance.
	whose        string
	mark         []string
	uid          *int
	containerID  string
	containerPID int
	// netnsPID, when not 0: the listener is in that process's network
	// namespace, not the host's.
	netnsPID int
}

// owns tells whether process pid is the application's.
func (o appOwner) owns(pid int) bool {
	if o.containerID != "" {
		return portowner.InContainer(pid, o.containerID, o.containerPID)
	}
	return procmark.Carries(pid, o.mark...) && (o.uid == nil || processUID(pid) == *o.uid)
}

// who names the owner in refusals.
func (o appOwner) who() string {
	if o.whose == "" {
		return "the instance"
	}
	return o.whose
}
