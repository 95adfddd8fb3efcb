package sqlite_test

import (
	"syscall"
	"testing"
	"time"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestCPU(t *testing.T) {
	for _, bm := range []struct {
		name string
		fn   func(*testing.B)
	}{{"lifecycle", BenchmarkJobLifecycle}, {"queued", BenchmarkListQueuedJobs}} {
		start := cpuNow()
		r := testing.Benchmark(bm.fn)
		t.Logf("%s: %v; cpu/op %v", bm.name, r, (cpuNow()-start)/time.Duration(r.N))
	}
}
