package container

import (
	"context"
	"io"
)

// ExecRunner runs processes to their end inside a running container, as
// `docker exec` does, and reads what a long-lived container uses. A
// Runtime that serves compute instances (one long-lived container each)
// implements it; Engine does. (Execer is the interactive kind: a process
// whose streams the caller drives, for SSH sessions.)
type ExecRunner interface {
	// ExecWait runs opts.Command in container id and returns its exit
	// code once it ends (or, with opts.Detach, 0 as soon as it started).
	// ErrNotFound when the container is gone, ErrInvalid for bad options
	// (the field named).
	ExecWait(ctx context.Context, id string, opts ExecOptions) (int, error)

	// State is the container's running state and, while it runs, its
	// first process's pid on this host and the CPU time its processes
	// have used. ErrNotFound when the container is gone.
	State(ctx context.Context, id string) (State, error)
}

// ExecOptions is a process to run in a container.
type ExecOptions struct {
	Command []string // required
	// User is "uid" or "uid:gid" inside the container; the container's
	// user when empty.
	User       string
	Env        map[string]string
	WorkingDir string // absolute; the container's when empty
	// Tty gives the process a terminal (its output is then one stream,
	// to Stdout).
	Tty bool
	// Detach starts the process and returns without waiting for it:
	// Stdin, Stdout and Stderr are ignored.
	Detach bool
	Stdin  io.Reader // nil: no input
	Stdout io.Writer // nil discards
	Stderr io.Writer // nil discards
}

// State is a container's state as Engine.State reports it.
type State struct {
	Running bool
	// Pid is its first process's pid on this host (0 when it is not
	// running).
	Pid int
	// CPUNanos is the CPU time its processes used, in nanoseconds, from
	// its cgroup.
	CPUNanos uint64
}
