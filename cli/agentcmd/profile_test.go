package agentcmd

import (
	"os"
	"path/filepath"
	"testing"
)

// With CPUProfileEnv naming a folder, the agent writes its profile there
// under its node's name when it stops, and takes the variable out of its
// environment so that its jobs do not inherit it; without it, nothing.
func TestCPUProfileEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(CPUProfileEnv, dir)
	stop := startCPUProfile("node-a")
	if _, set := os.LookupEnv(CPUProfileEnv); set {
		t.Errorf("%s is still in the environment the jobs inherit", CPUProfileEnv)
	}
	stop()
	fi, err := os.Stat(filepath.Join(dir, "node-a.cpu.pprof"))
	if err != nil || fi.Size() == 0 {
		t.Fatalf("no profile written: %v", err)
	}

	t.Setenv(CPUProfileEnv, "")
	startCPUProfile("node-b")()
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("%d files in the folder; without the variable no profile is written", len(entries))
	}
}
