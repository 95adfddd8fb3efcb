// Package nodeproc marks and finds the processes a Shoal agent starts for
// its node: job ranks, an instance's shells, notebook, applications and
// setup scripts, a cluster node's SSH sessions.
//
// Those processes run in process groups and sessions of their own, so they
// outlive an agent killed hard; the local provider finds them through /proc
// to end them with their node, and an instance's agent to measure its CPU
// use for idle shutdown. A node ID alone does not tell them apart: an
// instance's node ID comes from its name, so two servers on one host (two
// installations, or the end-to-end tests' servers running side by side)
// can each have a node "ci-local-myinstance", and releasing one would kill
// the other's notebook. The node's work dir, under its server's data dir,
// is what is unique on a host, so every process carries both.
package nodeproc

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// Environment variables of every process an agent starts for its node.
const (
	// EnvNodeID is the node's ID.
	EnvNodeID = "SHOAL_NODE_ID"
	// EnvNodeDir is the node's work dir, an absolute path.
	EnvNodeDir = "SHOAL_NODE_DIR"
)

// Env returns the variables that mark a process of node id with work
// dir dir, as KEY=value.
func Env(id, dir string) []string {
	return []string{EnvNodeID + "=" + id, EnvNodeDir + "=" + dir}
}

// Find lists the processes whose environment marks them as node id's,
// with work dir dir, leaving out the calling process. A process that
// changed its own variables is not found; a process exec'd with a fresh
// environment would not be either, which is why the provider also signals
// the process group of each one it finds.
func Find(id, dir string) []int {
	if id == "" || dir == "" {
		return nil
	}
	wantID := []byte("\x00" + EnvNodeID + "=" + id + "\x00")
	wantDir := []byte("\x00" + EnvNodeDir + "=" + dir + "\x00")
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
		// Framed by NULs, so that neither a longer ID nor a dir below
		// this one matches.
		framed := append(append([]byte{0}, env...), 0)
		if bytes.Contains(framed, wantID) && bytes.Contains(framed, wantDir) {
			out = append(out, pid)
		}
	}
	return out
}
