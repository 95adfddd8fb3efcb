package main

import (
	"fmt"
	"log"
	"os"
	"os/exec"
	"runtime"
	"strconv"
)

// serverCPU is the CPU the server runs on with --pin; the bench takes
// the others.
const serverCPU = "0"

// benchCPUs is the taskset list of the CPUs the bench runs on with --pin
// on a machine of n CPUs: every one but the server's.
func benchCPUs(n int) string {
	if n <= 2 {
		return "1"
	}
	return "1-" + strconv.Itoa(n-1)
}

// pinning pins this process (every thread: the fake agents and the
// clients are goroutines on them, and threads started later inherit the
// mask) away from the server's CPU when --pin is set, and returns the
// header line that says how the CPUs are shared. Without it the fake
// agents' 10,000 heartbeats share the server's cores and the decision's
// tail is partly theirs.
func pinning() string {
	n := runtime.NumCPU()
	if !*pin {
		return fmt.Sprintf("pinning: off (%d CPUs shared by the server and the bench)", n)
	}
	if n < 2 {
		log.Fatalf("--pin needs 2 CPUs or more and this process has %d: pass --pin=false", n)
	}
	cpus := benchCPUs(n)
	if out, err := exec.Command("taskset", "-a", "-p", "-c", cpus, strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
		log.Fatalf("--pin: taskset: %v: %s (pass --pin=false to run unpinned)", err, out)
	}
	// The runtime sized GOMAXPROCS from the mask it started with.
	runtime.GOMAXPROCS(max(1, n-1))
	return fmt.Sprintf("pinning: server on CPU %s, bench (fake agents, clients) on CPU %s (taskset; --pin=false shares them)", serverCPU, cpus)
}
