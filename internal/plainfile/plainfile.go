// Package plainfile opens regular files without the Go runtime's
// poller. os.OpenFile tries to register every file it opens with the
// poller: on Linux that is four fcntl(2) and an epoll_ctl(2) that fails
// for a regular file, five system calls around the open that do nothing.
// A node's agent opens a few such files for every job (its log, the log
// again to ship it), and a node running hundreds of jobs a second counts
// them (bench/jobs --agent-cpuprofile). Files opened here read and write
// as os.File's do (blocking, which a regular file's reads and writes are
// anyway); they cannot have deadlines, which regular files do not
// support either.
package plainfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// Open opens path as os.OpenFile does (flag and perm alike; the
// descriptor is close-on-exec), at the cost of the open and one fcntl.
func Open(path string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := unix.Open(path, flag|unix.O_CLOEXEC, uint32(perm.Perm()))
	for err == unix.EINTR {
		fd, err = unix.Open(path, flag|unix.O_CLOEXEC, uint32(perm.Perm()))
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	// NewFile registers a descriptor with the poller only when it is
	// non-blocking already: this one is not.
	return os.NewFile(uintptr(fd), path), nil
}
