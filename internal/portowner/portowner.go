// Package portowner tells which processes listen on a TCP port of this
// host's loopback address (Linux only: it reads /proc).
//
// The server's application proxy dials an instance's application at
// 127.0.0.1:<port>, a port the instance's spec names. Whatever listens
// there answers — another user's notebook, an agent's identity endpoint,
// the server itself — unless the proxy first checks that the listener
// belongs to the instance. A listening socket is found in /proc/net/tcp
// and /proc/net/tcp6 (its inode), and its holders by the "socket:[inode]"
// links in /proc/<pid>/fd; the caller then decides whether a holder is
// one of its own (an instance's processes carry its node's mark, see
// internal/procmark).
package portowner

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Listener is a listening socket that a connection to 127.0.0.1:port
// can reach.
type Listener struct {
	// Addr is the address it is bound to, as ip:port.
	Addr string
	// Inode identifies the socket.
	Inode string
	// PIDs are the processes holding it; empty when none could be seen
	// (another user's process, when not root).
	PIDs []int
}

// Loopback lists the listening TCP sockets on port that a connection to
// 127.0.0.1:port can reach: those bound to 127.0.0.1, 0.0.0.0, :: or
// ::ffff:127.0.0.1, with the processes holding each.
func Loopback(port int) ([]Listener, error) { return loopbackIn("/proc/net", port) }

// LoopbackIn is Loopback in the network namespace of process nsPID (a
// container's on a network of its own): its tables are
// /proc/<nsPID>/net/tcp{,6}; the holders are found in every process, as
// socket inodes are the host's.
func LoopbackIn(nsPID, port int) ([]Listener, error) {
	if nsPID <= 0 {
		return nil, fmt.Errorf("no process to take the network namespace of (pid %d)", nsPID)
	}
	return loopbackIn("/proc/"+strconv.Itoa(nsPID)+"/net", port)
}

func loopbackIn(dir string, port int) ([]Listener, error) {
	if port < 1 || port > 65535 {
		return nil, fmt.Errorf("port %d is not between 1 and 65535", port)
	}
	var out []Listener
	for _, f := range []string{dir + "/tcp", dir + "/tcp6"} {
		ls, err := listeners(f, port)
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		out = append(out, ls...)
	}
	if len(out) == 0 {
		return nil, nil
	}
	want := map[string]*Listener{}
	for i := range out {
		want["socket:["+out[i].Inode+"]"] = &out[i]
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		link, err := os.Readlink(fd)
		if err != nil {
			continue
		}
		l := want[link]
		if l == nil {
			continue
		}
		// /proc/<pid>/fd/<n>
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(fd))))
		if err == nil && !hasPID(l.PIDs, pid) {
			l.PIDs = append(l.PIDs, pid)
		}
	}
	return out, nil
}

// listenState is TCP_LISTEN in /proc/net/tcp's "st" column.
const listenState = "0A"

// listeners parses one /proc/net/tcp{,6} table for LISTEN sockets on
// port reachable from 127.0.0.1.
func listeners(path string, port int) ([]Listener, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Listener
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...
		fs := strings.Fields(sc.Text())
		if len(fs) < 10 || fs[3] != listenState {
			continue
		}
		host, p, ok := strings.Cut(fs[1], ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(p, 16, 16)
		if err != nil || int(n) != port {
			continue
		}
		if ip, ok := loopbackReachable(host); ok {
			out = append(out, Listener{Addr: ip + ":" + strconv.Itoa(port), Inode: fs[9]})
		}
	}
	return out, sc.Err()
}

// loopbackReachable tells whether a socket bound to host (the kernel's
// hex form: 4 bytes, or 16 for tcp6, each 32-bit word in host order) takes
// connections to 127.0.0.1, and names the address.
func loopbackReachable(host string) (string, bool) {
	switch strings.ToUpper(host) {
	case "0100007F":
		return "127.0.0.1", true
	case "00000000":
		return "0.0.0.0", true
	case "00000000000000000000000000000000":
		return "[::]", true
	case "0000000000000000FFFF00000100007F":
		return "[::ffff:127.0.0.1]", true
	}
	return "", false
}

func hasPID(pids []int, pid int) bool {
	for _, p := range pids {
		if p == pid {
			return true
		}
	}
	return false
}

// ErrNoListener is Check's answer when nothing listens on the port.
var ErrNoListener = errors.New("nothing listens on the port")

// Check returns nil when something listens on 127.0.0.1:port and every
// listening socket a connection there could reach is held by a process
// that own accepts; ErrNoListener when nothing listens; otherwise an
// error naming the socket and its holders. Every socket counts, not one:
// with SO_REUSEPORT two processes can listen on one port, and the kernel
// spreads connections between them.
func Check(port int, own func(pid int) bool) error { return check(Loopback, port, own) }

// CheckIn is Check in the network namespace of process nsPID.
func CheckIn(nsPID, port int, own func(pid int) bool) error {
	return check(func(port int) ([]Listener, error) { return LoopbackIn(nsPID, port) }, port, own)
}

func check(find func(int) ([]Listener, error), port int, own func(pid int) bool) error {
	ls, err := find(port)
	if err != nil {
		return err
	}
	if len(ls) == 0 {
		return ErrNoListener
	}
	for _, l := range ls {
		ok := false
		for _, pid := range l.PIDs {
			if own(pid) {
				ok = true
				break
			}
		}
		if !ok {
			if len(l.PIDs) == 0 {
				return fmt.Errorf("the socket listening on %s belongs to a process this server cannot see", l.Addr)
			}
			return fmt.Errorf("the socket listening on %s belongs to process %v", l.Addr, l.PIDs)
		}
	}
	return nil
}
