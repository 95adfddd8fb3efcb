package core

// ListenerOwner says whose process must hold an application's listener
// for the application proxy to dial it: an instance's application
// (compute.InstanceAppReport) and a job's service (job.ServiceInstance)
// carry it from their agent, and the proxy checks it at each dial, so
// that a port can never name another user's or the server's listener.
type ListenerOwner struct {
	// UID is the OS account the work runs as, when its agent runs work as
	// accounts of their own: the listener must be that account's (an
	// environment mark alone can be copied by anyone's process).
	UID *int `json:"uid,omitempty"`
	// ContainerID and ContainerPID name the container the work runs in
	// and its first process (on the host): the listener must then be a
	// process of that container.
	ContainerID  string `json:"container_id,omitempty"`
	ContainerPID int    `json:"container_pid,omitempty"`
	// NetNSPID, when not 0, is a host process in whose network namespace
	// the address is, not the host's: the proxy dials, and checks the
	// listener, there. The process must pass the same ownership test as
	// the listener: a namespace is entered only through the work's own
	// process.
	NetNSPID int `json:"netns_pid,omitempty"`
}
