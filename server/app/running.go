package app

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/shoal-ml/shoal/provider/local"
)

// reportRunningAgents says, as the server stops, which local nodes keep
// running and what becomes of them: nodes are machines and outlive the
// control plane, which surprised users who pressed Ctrl-C and found agents
// running (from a binary `go run` had deleted) with nothing said.
func reportRunningAgents(log *slog.Logger, agents []local.RunningAgent) {
	if len(agents) == 0 {
		return
	}
	names := make([]string, len(agents))
	groups := make([]string, len(agents))
	var gone []string
	for i, a := range agents {
		names[i] = fmt.Sprintf("%s (pid %d)", a.NodeID, a.PID)
		groups[i] = fmt.Sprintf("-%d", a.PID)
		if a.ExecutableGone && !slices.Contains(gone, a.Executable) {
			gone = append(gone, a.Executable)
		}
	}
	what := fmt.Sprintf("%d node agents keep running", len(agents))
	if len(agents) == 1 {
		what = "1 node agent keeps running"
	}
	log.Warn(what+" after the server stopped: the next `shoal server` with this data dir adopts them (their jobs go on); "+
		"to stop them, delete their computes (shoal compute delete) before stopping the server, or kill their process groups: kill -TERM "+strings.Join(groups, " "),
		slog.String("nodes", strings.Join(names, ", ")))
	if len(gone) > 0 {
		log.Warn("the binary these agents run was deleted (go run removes its build when it exits): they run on from memory and are adopted all the same; "+
			"run a binary built with `go build` to keep it", slog.String("executable", strings.Join(gone, ", ")))
	}
}
