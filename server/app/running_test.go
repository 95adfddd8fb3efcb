package app

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/provider/local"
)

func TestStopSaysWhichNodesKeepRunning(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	reportRunningAgents(log, nil)
	if buf.Len() != 0 {
		t.Fatalf("no agents, yet: %s", buf.String())
	}
	reportRunningAgents(log, []local.RunningAgent{
		{NodeID: "cpu-1", PID: 101, Executable: "/usr/bin/shoal"},
		{NodeID: "cpu-2", PID: 102, Executable: "/tmp/go-build1/b001/exe/shoal", ExecutableGone: true},
	})
	got := buf.String()
	for _, want := range []string{"level=WARN", "2 node agents keep running", "cpu-1 (pid 101)", "cpu-2 (pid 102)",
		"next `shoal server`", "adopts them", "shoal compute delete", "kill -TERM -101 -102",
		"was deleted", "/tmp/go-build1/b001/exe/shoal", "go build"} {
		if !strings.Contains(got, want) {
			t.Errorf("the stop message does not say %q:\n%s", want, got)
		}
	}
	buf.Reset()
	reportRunningAgents(log, []local.RunningAgent{{NodeID: "cpu-1", PID: 101, Executable: "/usr/bin/shoal"}})
	if strings.Contains(buf.String(), "deleted") || !strings.Contains(buf.String(), "1 node agent keeps running") {
		t.Errorf("one agent, binary present:\n%s", buf.String())
	}
}
