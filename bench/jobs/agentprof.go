package main

import (
	"log"
	"os"
	"path/filepath"
)

// agentProfileEnv is what `shoal agent` reads to profile itself
// (cli/agentcmd.CPUProfileEnv; not imported, so that the bench links no
// CLI): a folder where each agent writes <node-id>.cpu.pprof as it ends.
const agentProfileEnv = "SHOAL_AGENT_CPUPROFILE"

// keepBusiestProfile copies the largest profile in dir (the agent that
// sampled most: a throughput node's, not the latency node's) to dest.
func keepBusiestProfile(dir, dest string) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.cpu.pprof"))
	best, size := "", int64(-1)
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			best, size = p, fi.Size()
		}
	}
	if best == "" {
		log.Printf("agent cpu profile: no agent wrote one in %s", dir)
		return
	}
	b, err := os.ReadFile(best)
	if err == nil {
		err = os.WriteFile(dest, b, 0o600)
	}
	if err != nil {
		log.Printf("agent cpu profile: %v", err)
		return
	}
	log.Printf("agent cpu profile: %s (from %s; the %d agents' profiles are in %s)", dest, filepath.Base(best), len(paths), dir)
}
