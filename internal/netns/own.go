package netns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// NS is a network namespace of its own that the agent made for a piece
// of work (a job's rank, an instance): nothing of the host's network is
// in it, its loopback is up and empty. The agent holds it open (a file
// descriptor) until Close, so that it outlives the processes in it only
// as long as the agent wants; it goes when the last of them, its
// sockets included, is gone.
type NS struct {
	mu     sync.Mutex
	fd     int
	closed bool
	// out is the user-mode network stack giving the namespace its way
	// out (see Outbound), when started.
	out *exec.Cmd
	// outExit ends it: the stack exits when its other end closes,
	// whether Close closes it or the agent dies.
	outExit *os.File
	// outDone is closed once the stack has exited.
	outDone chan struct{}
}

// New makes a network namespace (unshare(2) on a thread of its own,
// which needs CAP_SYS_ADMIN) with its loopback up, and holds it.
func New() (*NS, error) {
	type made struct {
		fd  int
		err error
	}
	done := make(chan made, 1)
	go func() {
		runtime.LockOSThread()
		self, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- made{-1, fmt.Errorf("this thread's network namespace: %w", err)}
			return
		}
		defer unix.Close(self)
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			// Nothing changed: the thread is still in ours.
			runtime.UnlockOSThread()
			done <- made{-1, fmt.Errorf("making a network namespace (needs CAP_SYS_ADMIN): %w", err)}
			return
		}
		fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			err = loopbackUp()
		}
		if unix.Setns(self, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		} else if err == nil {
			err = errors.New("could not return from the new network namespace")
		}
		if err != nil && fd >= 0 {
			unix.Close(fd)
			fd = -1
		}
		done <- made{fd, err}
	}()
	m := <-done
	if m.err != nil {
		return nil, m.err
	}
	return &NS{fd: m.fd}, nil
}

// loopbackUp raises lo in the calling thread's network namespace (a new
// one has it down).
func loopbackUp() error {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("raising the loopback: %w", err)
	}
	defer unix.Close(s)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("raising the loopback: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("raising the loopback: %w", err)
	}
	return nil
}

// do runs f on a thread inside the namespace.
func (ns *NS) do(f func() error) error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.closed {
		return errors.New("the network namespace is closed")
	}
	return inFD(ns.fd, f)
}

// Start starts cmd inside the namespace: its process, and whatever it
// starts, has the namespace's network and no other.
func (ns *NS) Start(cmd *exec.Cmd) error {
	// The child inherits the namespace of the thread that forks it,
	// which is the locked one do runs f on.
	return ns.do(cmd.Start)
}

// Listen listens on addr inside the namespace.
func (ns *NS) Listen(network, addr string) (net.Listener, error) {
	var l net.Listener
	err := ns.do(func() error {
		var err error
		l, err = net.Listen(network, addr)
		return err
	})
	return l, err
}

// Dial connects to addr from inside the namespace.
func (ns *NS) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := ns.do(func() error {
		d := net.Dialer{FallbackDelay: -1}
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// Outbound gives the namespace a way out through slirp4netns, a
// user-mode network stack: a tap device with 10.0.2.100/24, its gateway
// 10.0.2.2 and DNS 10.0.2.3, connections out made by slirp4netns from
// the host's namespace. The host's loopback stays out of reach
// (--disable-host-loopback: the gateway is not the host's 127.0.0.1),
// and the stack drops its privileges once the device is up
// (--enable-sandbox). It does not wait for the device: the work starts
// meanwhile, and a connection out made before it is up fails (the
// stack takes a few milliseconds; a job's first outbound connection
// comes later). Close ends it.
func (ns *NS) Outbound(slirp string) error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.closed {
		return errors.New("the network namespace is closed")
	}
	if ns.out != nil {
		return nil
	}
	// The namespace reaches slirp4netns as its fd 3 and the exit pipe
	// as fd 4: slirp4netns exits when the pipe's write end closes,
	// which Close does, and the kernel does if the agent dies.
	exitR, exitW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer exitR.Close()
	// A copy of the descriptor: an *os.File closes its own when it goes.
	dup, err := unix.FcntlInt(uintptr(ns.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		exitW.Close()
		return err
	}
	nsFile := os.NewFile(uintptr(dup), "netns")
	defer nsFile.Close()
	cmd := exec.Command(slirp, "--configure", "--mtu=65520", "--disable-host-loopback", "--enable-sandbox",
		"--netns-type=path", "--exit-fd=4", "/proc/self/fd/3", "tap0")
	cmd.ExtraFiles = []*os.File{nsFile, exitR}
	// The sandbox unshares a mount namespace and detaches its old root.
	// Started in the agent's mount namespace, its copy of /run/netns
	// would still be a peer of the host's (ip netns and podman make it
	// shared), and the detach would unmount every named namespace there:
	// other programs' and other jobs' containers' networks. A mount
	// namespace of its own, made private throughout (Go remounts / with
	// MS_REC|MS_PRIVATE after the unshare), keeps the detach to itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	if err := cmd.Start(); err != nil {
		exitW.Close()
		return fmt.Errorf("starting slirp4netns: %w", err)
	}
	ns.out, ns.outExit, ns.outDone = cmd, exitW, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(ns.outDone)
	return nil
}

// Path names the namespace for a process of the agent's (a file
// /proc/<agent's pid>/fd/<fd>), while it is open.
func (ns *NS) Path() string {
	return "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/" + strconv.Itoa(ns.fd)
}

// Close lets the namespace go (it goes once nothing in it is left) and
// ends its outbound stack.
func (ns *NS) Close() error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.closed {
		return nil
	}
	ns.closed = true
	if ns.outExit != nil {
		_ = ns.outExit.Close()
	}
	return unix.Close(ns.fd)
}
