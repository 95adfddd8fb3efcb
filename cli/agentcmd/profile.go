package agentcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
)

// CPUProfileEnv names a folder: an agent started with it set writes a CPU
// profile of its whole life to <folder>/<node-id>.cpu.pprof when it ends.
// It is an environment variable, not a flag, because a provider starts
// agents with its own arguments and passes its environment on (the local
// provider does): bench/jobs sets it on the server to profile the agents
// of a run. Unset, the agent profiles nothing.
const CPUProfileEnv = "SHOAL_AGENT_CPUPROFILE"

// startCPUProfile starts the CPU profile CPUProfileEnv asks for, and
// returns what stops it and writes the file; a profile that cannot start
// is reported and the agent runs on without it.
func startCPUProfile(nodeID string) (stop func()) {
	dir := os.Getenv(CPUProfileEnv)
	os.Unsetenv(CPUProfileEnv) // jobs must not inherit it
	if dir == "" {
		return func() {}
	}
	name := filepath.Base(nodeID)
	if name == "" || name == "." || name == ".." || name == "/" {
		name = "agent"
	}
	f, err := os.Create(filepath.Join(dir, name+".cpu.pprof"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "shoal agent: %s: %v\n", CPUProfileEnv, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "shoal agent: %s: %v\n", CPUProfileEnv, err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
