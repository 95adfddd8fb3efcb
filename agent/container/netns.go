package container

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// Dial connects to addr from inside the container's network namespace.
// A socket belongs to the namespace it was created in, so the dial runs
// on an OS thread of its own that enters the namespace (setns, which
// needs CAP_SYS_ADMIN: the agent runs as root on a node with
// containers), creates and connects the socket there, and goes back.
// With host networking the namespace is the host's and nothing changes.
func (e *Engine) Dial(ctx context.Context, id, network, addr string) (net.Conn, error) {
	op := "dial " + addr + " in " + id
	in, err := e.cli.ContainerInspect(ctx, id)
	if err != nil {
		return nil, classify(op, err)
	}
	if in.State == nil || !in.State.Running || in.State.Pid <= 0 {
		return nil, errorf(ErrInvalid, op, "the container is not running")
	}
	return dialInNetNS(ctx, in.State.Pid, network, addr)
}

// dialInNetNS dials from the network namespace of process pid.
func dialInNetNS(ctx context.Context, pid int, network, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		// Locked and never unlocked when the way back fails: the thread
		// then ends with this goroutine instead of serving others in the
		// container's namespace.
		runtime.LockOSThread()
		self, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- result{err: fmt.Errorf("this thread's network namespace: %w", err)}
			return
		}
		defer unix.Close(self)
		target, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- result{err: fmt.Errorf("the container's network namespace: %w", err)}
			return
		}
		defer unix.Close(target)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			done <- result{err: fmt.Errorf("enter the container's network namespace: %w", err)}
			return
		}
		// The socket is created on this thread, in the namespace; the
		// connect then completes wherever the poller runs.
		// No dual-stack racing: its second attempt would dial from
		// another goroutine, on a thread in the host's namespace.
		d := net.Dialer{FallbackDelay: -1}
		c, err := d.DialContext(ctx, network, addr)
		if unix.Setns(self, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- result{c, err}
	}()
	r := <-done
	return r.c, r.err
}
