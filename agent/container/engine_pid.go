package container

import (
	"context"
	"fmt"
)

// PIDer is an engine that tells a running container's first process as
// the host sees it. An instance's agent reports it with an application's
// container, so that the server's application proxy can tell the
// container's listener from any other process on its port.
type PIDer interface {
	ContainerPID(ctx context.Context, id string) (int, error)
}

// ContainerPID is the host PID of the running container's first process;
// an error when the container is not running (the engine says 0).
func (e *Engine) ContainerPID(ctx context.Context, id string) (int, error) {
	c, err := e.cli.ContainerInspect(ctx, id)
	if err != nil {
		return 0, classify("inspect "+id, err)
	}
	if c.State == nil || c.State.Pid <= 0 {
		return 0, &Error{Kind: ErrNotFound, Op: "inspect " + id, Msg: fmt.Sprintf("container %s is not running", id)}
	}
	return c.State.Pid, nil
}
