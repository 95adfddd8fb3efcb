package local

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// errNoPID means the node has no (valid) pid file: it never started or was
// released.
var errNoPID = errors.New("no agent pid file")

// writePID records pid in dir's PIDFile atomically, so that a reader never
// sees a partial number.
func writePID(dir string, pid int) error {
	tmp, err := os.CreateTemp(dir, PIDFile+".tmp*")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(tmp, "%d\n", pid)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, PIDFile))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// readPID returns the pid in dir's PIDFile; errNoPID when there is none or
// it does not hold a pid.
func readPID(dir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, PIDFile))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
		return 0, errNoPID
	} else if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return 0, errNoPID
	}
	return pid, nil
}

// removePID removes dir's PIDFile if it still names pid (a new agent for
// the same node may have replaced it).
func removePID(dir string, pid int) {
	if got, err := readPID(dir); err == nil && got == pid {
		os.Remove(filepath.Join(dir, PIDFile))
	}
}

// awaitExec waits, a second at most, until process pid's command line can
// be read. exec(2) closes the close-on-exec pipe that tells cmd.Start it
// succeeded before the kernel has set the new program's arguments: for
// that moment /proc/<pid>/cmdline reads empty, and isAgent takes the new
// agent for none (on a loaded host the moment lasted long enough for a
// test to see it). Writing the pid file only after it keeps every reader
// of the file seeing an agent. A process that is gone or a zombie ends the
// wait at once.
func awaitExec(pid int) {
	for range 200 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || len(b) > 0 || zombie(pid) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// zombie reports whether process pid has exited (or is gone) but not been
// reaped: its state in /proc/<pid>/stat is Z or X, or the file is gone.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}

// isAgent reports whether process pid is the agent of node id: its command
// line has an "agent" argument and "--node-id <id>". A zombie has an empty
// command line and a vanished process none, so both count as not running.
func isAgent(pid int, id string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return false
	}
	argv := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
	sub, node := false, false
	for i, a := range argv {
		switch {
		case a == "agent":
			sub = true
		case a == "--node-id" && i+1 < len(argv) && argv[i+1] == id,
			a == "--node-id="+id:
			node = true
		}
	}
	return sub && node
}
