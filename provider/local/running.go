package local

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// RunningAgent is a node agent running on this host from this provider's
// nodes dir, whichever server started it.
type RunningAgent struct {
	NodeID string
	PID    int
	Dir    string
	// Executable is the binary the agent runs; ExecutableGone says it was
	// deleted under it (`go run` removes its build when it exits): the
	// agent runs on from memory.
	Executable     string
	ExecutableGone bool
}

// RunningAgents lists the agents still running, found as adoption finds
// them: a work dir's pid file naming a live `shoal agent --node-id ID`.
// A server stopping lists them to say which nodes outlive it.
func (p *Provider) RunningAgents() []RunningAgent {
	entries, err := os.ReadDir(p.cfg.NodesDir)
	if err != nil {
		return nil
	}
	var out []RunningAgent
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(p.cfg.NodesDir, e.Name())
		pid, err := readPID(dir)
		if err != nil || !isAgent(pid, e.Name()) {
			continue
		}
		a := RunningAgent{NodeID: e.Name(), PID: pid, Dir: dir}
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil {
			// The kernel marks an executable unlinked after exec.
			a.Executable, a.ExecutableGone = strings.CutSuffix(exe, " (deleted)")
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeID < out[j].NodeID })
	return out
}
