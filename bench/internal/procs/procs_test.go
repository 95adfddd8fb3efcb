package procs

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for an agent: run as
// `<binary> agent --work-dir DIR` with PROCS_STANDIN set, it just waits.
func TestMain(m *testing.M) {
	if os.Getenv("PROCS_STANDIN") != "" {
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A process whose command line is `<binary> agent ... <dir>/...` is found
// by its dir; one under another dir, or not an agent, is not.
func TestAgentsFindsAgentsByDir(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	start := func(args ...string) int {
		c := exec.Command(os.Args[0], args...)
		c.Env = append(os.Environ(), "PROCS_STANDIN=1")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		return c.Process.Pid
	}
	mine := start("agent", "--work-dir", filepath.Join(dir, "nodes", "n1"))
	other := start("agent", "--work-dir", filepath.Join(elsewhere, "nodes", "n1"))
	notAgent := start("server", "--data-dir", dir)
	got := Agents(dir)
	if !slices.Contains(got, mine) || slices.Contains(got, other) || slices.Contains(got, notAgent) {
		t.Fatalf("Agents(%s) = %v; want %d among them and neither %d nor %d", dir, got, mine, other, notAgent)
	}
}
