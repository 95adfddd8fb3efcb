package rank

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/runas"
)

// BenchmarkTrivialRank runs ranks of `true` one after another on one
// node, as a node of bench/jobs does, and reports the CPU each cost: the
// agent's own (this process, the test's small HTTP server included) and
// the job's process (reaped children). As root the ranks run as an
// account of their own in its network namespace, as bench/jobs's do.
// Run it beside a baseline: go test -run '^$' -bench TrivialRank ./agent/rank
func BenchmarkTrivialRank(b *testing.B) {
	srv := newOutputsServer(&testing.T{})
	defer srv.Close()
	n := Node{ServerURL: srv.URL, NodeID: "bench-trivial", WorkDir: b.TempDir()}
	if os.Geteuid() == 0 {
		acc, err := runas.New()
		if err != nil {
			b.Fatal(err)
		}
		n.Accounts = acc
		n.Networks = NewNetworks("", srv.URL)
	}
	a := newTestAgent(&testing.T{}, n)
	var self0, kids0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self0)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids0)
	b.ResetTimer()
	for i := range b.N {
		tk := artifactsTask(fmt.Sprintf("att-trivial-%d-%d", b.N, i), "true")
		tk.Outputs = nil
		New(a.Node, tk).Run(context.Background())
	}
	b.StopTimer()
	var self1, kids1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self1)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids1)
	cpu := func(a, b syscall.Rusage) time.Duration {
		return time.Duration(b.Utime.Nano() + b.Stime.Nano() - a.Utime.Nano() - a.Stime.Nano())
	}
	b.ReportMetric(float64(cpu(self0, self1).Microseconds())/1000/float64(b.N), "agent-cpu-ms/op")
	b.ReportMetric(float64(cpu(kids0, kids1).Microseconds())/1000/float64(b.N), "job-cpu-ms/op")
}
