// Package netns makes sockets inside another process's network
// namespace: a connection from it, or a listener in it. A socket belongs
// to the namespace it was created in, so each runs on an OS thread of its
// own that enters the namespace (setns(2), which needs CAP_SYS_ADMIN),
// creates the socket there and goes back; the socket keeps working from
// any thread afterwards.
//
// The agent uses it to reach what runs in a container on a network of
// its own (an instance in a virtual network: its notebook, its
// applications, its SSH forwards) and to serve the identity endpoint on
// that container's loopback; the server's application proxy uses it to
// reach such an instance's applications on a host it shares with them.
package netns

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Dial connects to addr from inside the network namespace of process
// pid.
func Dial(ctx context.Context, pid int, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := in(pid, func() error {
		// No dual-stack racing: its second attempt would dial from
		// another goroutine, on a thread in this process's namespace.
		d := net.Dialer{FallbackDelay: -1}
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// Listen listens on addr inside the network namespace of process pid.
// The listener lives as long as it is open, whatever becomes of pid.
func Listen(pid int, network, addr string) (net.Listener, error) {
	var l net.Listener
	err := in(pid, func() error {
		var err error
		l, err = net.Listen(network, addr)
		return err
	})
	return l, err
}

// in runs f on a locked OS thread inside pid's network namespace.
func in(pid int, f func() error) error {
	if pid <= 0 {
		return fmt.Errorf("no process to take the network namespace of (pid %d)", pid)
	}
	target, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("the network namespace of process %d: %w", pid, err)
	}
	defer unix.Close(target)
	if err := inFD(target, f); err != nil {
		return fmt.Errorf("process %d: %w", pid, err)
	}
	return nil
}

// inFD runs f on a locked OS thread inside the network namespace that
// the open file target is.
func inFD(target int, f func() error) error {
	done := make(chan error, 1)
	go func() {
		// Locked, and never unlocked when the way back fails: the thread
		// then ends with this goroutine instead of serving others in the
		// other namespace.
		runtime.LockOSThread()
		self, err := homeNS()
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("this thread's network namespace: %w", err)
			return
		}
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("entering the network namespace: %w", err)
			return
		}
		err = f()
		if unix.Setns(self, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- err
	}()
	return <-done
}

// homeNS is the network namespace the process's threads are in, open
// for the threads that enter another to come back to. Opened once, by
// the first of them, before it enters: every thread the runtime hands a
// goroutine is in it (one that could not come back is never handed on).
// Opening the thread's own namespace and closing it on every entry cost
// a node's agent two system calls and a lookup in /proc for each job it
// started in a namespace (bench/jobs --agent-cpuprofile).
// A failed open is not kept: the next entry tries again.
func homeNS() (int, error) {
	home.mu.Lock()
	defer home.mu.Unlock()
	if home.fd < 0 {
		fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		home.fd = fd
	}
	return home.fd, nil
}

// home holds homeNS's descriptor (-1 until opened).
var home = struct {
	mu sync.Mutex
	fd int
}{fd: -1}
