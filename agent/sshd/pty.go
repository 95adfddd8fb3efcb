package sshd

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// winsize is a terminal's size in characters.
type winsize struct{ cols, rows uint32 }

// startTerminal starts cmd on a new terminal as its controlling
// terminal, in a new OS session; env gives the environment knowing the
// terminal's name.
func startTerminal(cmd *exec.Cmd, ws winsize, env func(tty string) []string, start func(*exec.Cmd) error) (*program, error) {
	master, tty, err := pty.Open()
	if err != nil {
		return nil, err
	}
	defer tty.Close() // the child has its own copies
	if master, err = pollable(master); err != nil {
		return nil, err
	}
	if err := setWinsize(master, ws); err != nil {
		_ = master.Close()
		return nil, err
	}
	cmd.Env = env(tty.Name())
	if c := credentialOf(cmd); c != nil {
		// The terminal is the login's, as login(1) makes it.
		if err := tty.Chown(int(c.Uid), int(c.Gid)); err != nil {
			_ = master.Close()
			return nil, err
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	// Ctty 0 is the child's stdin: the terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Credential: credentialOf(cmd)}
	if err := start(cmd); err != nil {
		_ = master.Close()
		return nil, err
	}
	return &program{cmd: cmd, master: master}, nil
}

// pollable returns f as a non-blocking file in Go's poller. pty.Open
// leaves the master in blocking mode (it calls Fd), where Close does not
// interrupt a pending Read: the session could not end while a process
// that left the session still holds the terminal.
func pollable(f *os.File) (*os.File, error) {
	defer f.Close()
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// setWinsize sets the terminal's size. It goes through SyscallConn, not
// Fd, to keep the file non-blocking (pty.Setsize would call Fd).
func setWinsize(master *os.File, ws winsize) error {
	rc, err := master.SyscallConn()
	if err != nil {
		return err
	}
	var ierr error
	err = rc.Control(func(fd uintptr) {
		ierr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(ws.rows), Col: uint16(ws.cols)})
	})
	if err != nil {
		return err
	}
	return ierr
}

// foregroundGroup is the terminal's foreground process group: the job
// the user is looking at, which a client's signal (^C) is meant for.
func foregroundGroup(master *os.File) (int, error) {
	rc, err := master.SyscallConn()
	if err != nil {
		return 0, err
	}
	var pg int
	var ierr error
	err = rc.Control(func(fd uintptr) {
		pg, ierr = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP)
	})
	if err != nil {
		return 0, err
	}
	return pg, ierr
}
