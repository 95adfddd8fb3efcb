// Package procmark marks processes through their environment and finds
// them again through /proc (Linux only).
//
// A Shoal agent's processes run in process groups and sessions of their
// own, so they outlive whatever started them; the environment, which every
// child inherits, is what still ties them together. Two marks use it:
//
//   - a node's: every process an agent starts for its node (job ranks, an
//     instance's shells, notebook, applications and setup scripts, a
//     cluster node's SSH sessions) carries Node(id, dir). The local
//     provider finds them with FindNode to end them with their node, and an
//     instance's agent to measure its CPU use for idle shutdown. The ID
//     alone does not tell nodes apart: an instance's node ID comes from its
//     name, so two servers on one host (two installations, or the end-to-end
//     tests' servers side by side) can each have "ci-local-myinstance", and
//     releasing one killed the other's notebook. The node's work dir, under
//     its server's data dir, is unique on a host, so both are matched;
//   - a run's: agent/apps marks each run of a script or an application with
//     a value of its own, to end every process of that run.
package procmark

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// The variables of a node's mark.
const (
	// NodeID is the node's ID.
	NodeID = "SHOAL_NODE_ID"
	// NodeDir is the node's work dir, an absolute path.
	NodeDir = "SHOAL_NODE_DIR"
)

// Node returns the mark of node id with work dir dir, as KEY=value.
func Node(id, dir string) []string {
	return []string{NodeID + "=" + id, NodeDir + "=" + dir}
}

// FindNode lists the live processes that carry node id's mark with work
// dir dir; none when either is empty.
func FindNode(id, dir string) []int {
	if id == "" || dir == "" {
		return nil
	}
	return Find(Node(id, dir)...)
}

// Find lists the live processes, other than the calling one, whose
// environment holds every one of vars (KEY=value) exactly: neither a
// longer value nor a dir below a wanted one matches. A process that
// changed its own variables, or exec'd with a fresh environment, is not
// found, which is why callers also signal the process group of each one
// they find. Zombies are left out: they are dead, waiting to be reaped.
func Find(vars ...string) []int {
	if len(vars) == 0 {
		return nil
	}
	want := make([][]byte, len(vars))
	for i, v := range vars {
		want[i] = []byte("\x00" + v + "\x00")
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	self := os.Getpid()
	var out []int
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join(p, "environ"))
		if err != nil || len(env) == 0 {
			continue
		}
		framed := append(append([]byte{0}, env...), 0)
		if holdsAll(framed, want) && alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// Carries reports whether live process pid's environment holds every one
// of vars (KEY=value) exactly, as Find matches them; false when there are
// none, or when the environment cannot be read (another user's process,
// when not root): a caller deciding whether to trust pid then refuses.
func Carries(pid int, vars ...string) bool {
	if len(vars) == 0 || pid <= 0 {
		return false
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil || len(env) == 0 {
		return false
	}
	want := make([][]byte, len(vars))
	for i, v := range vars {
		want[i] = []byte("\x00" + v + "\x00")
	}
	return holdsAll(append(append([]byte{0}, env...), 0), want) && alive(pid)
}

func holdsAll(env []byte, want [][]byte) bool {
	for _, w := range want {
		if !bytes.Contains(env, w) {
			return false
		}
	}
	return true
}

// alive reports whether pid is a process that has not ended.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and
	// may itself hold spaces or parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	state := b[i+2]
	return state != 'Z' && state != 'X'
}
