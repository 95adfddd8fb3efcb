package container

import (
	"context"
	"net"

	"github.com/shoal-ml/shoal/internal/netns"
)

// Dial connects to addr from inside the container's network namespace
// (see internal/netns: it needs CAP_SYS_ADMIN, and the agent runs as
// root on a node with containers). With host networking the namespace
// is the host's and nothing changes.
func (e *Engine) Dial(ctx context.Context, id, network, addr string) (net.Conn, error) {
	op := "dial " + addr + " in " + id
	in, err := e.cli.ContainerInspect(ctx, id)
	if err != nil {
		return nil, classify(op, err)
	}
	if in.State == nil || !in.State.Running || in.State.Pid <= 0 {
		return nil, errorf(ErrInvalid, op, "the container is not running")
	}
	return netns.Dial(ctx, in.State.Pid, network, addr)
}

// Listen listens on addr inside the container's network namespace (see
// Dial).
func (e *Engine) Listen(ctx context.Context, id, network, addr string) (net.Listener, error) {
	op := "listen on " + addr + " in " + id
	in, err := e.cli.ContainerInspect(ctx, id)
	if err != nil {
		return nil, classify(op, err)
	}
	if in.State == nil || !in.State.Running || in.State.Pid <= 0 {
		return nil, errorf(ErrInvalid, op, "the container is not running")
	}
	return netns.Listen(in.State.Pid, network, addr)
}
