package instance

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/domain/node"
)

// slowEngine stands in for a container engine that answers a container's
// state only when the test lets it: a podman that, on a loaded host, takes
// longer than a node's lease to answer (seen in CI, 2026-12-02). A real
// podman cannot be made that slow on demand, hence the stand-in.
type slowEngine struct {
	asked   atomic.Int32
	answers chan answer
}

type answer struct {
	cpuNanos uint64
	err      error
}

func (e *slowEngine) State(ctx context.Context, id string) (container.State, error) {
	e.asked.Add(1)
	select {
	case a := <-e.answers:
		return container.State{Running: a.err == nil, Pid: 1, CPUNanos: a.cpuNanos}, a.err
	case <-ctx.Done():
		return container.State{}, ctx.Err()
	}
}

func (e *slowEngine) ExecWait(context.Context, string, container.ExecOptions) (int, error) {
	return 0, errors.New("not in this test")
}

// reportWithin calls rt.Report and fails the test when it does not
// return within d.
func reportWithin(t *testing.T, rt *Runtime, d time.Duration) *node.InstanceReport {
	t.Helper()
	done := make(chan *node.InstanceReport, 1)
	go func() { done <- rt.Report(t.Context()) }()
	select {
	case r := <-done:
		return r
	case <-time.After(d):
		t.Fatalf("Report did not return within %s: it waits for the engine", d)
		return nil
	}
}

// waitSampled waits for the sample under way to end.
func waitSampled(t *testing.T, rt *Runtime) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		rt.mu.Lock()
		busy := rt.sampling
		rt.mu.Unlock()
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the sample did not end")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// newSampled is a runtime whose instance runs in a container of eng,
// on a clock the test moves.
func newSampled(t *testing.T, eng *slowEngine) (*Runtime, *coretest.Clock) {
	clock := coretest.NewClock(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	rt := New(Node{WorkDir: t.TempDir(), RunDir: t.TempDir(), Clock: clock})
	rt.box = &instanceBox{ex: eng, id: "box-1"}
	return rt, clock
}

// A report is the node's heartbeat: it does not wait for the container
// engine, however long the engine takes to say the container's CPU time.
// It starts a sample in the background, one at a time, and carries the
// latest that ended. Before, Report sampled in line: an engine slower than
// the lease had a healthy instance's node declared lost.
func TestReportDoesNotWaitForTheEngine(t *testing.T) {
	eng := &slowEngine{answers: make(chan answer)}
	rt, clock := newSampled(t, eng)

	if r := reportWithin(t, rt, 5*time.Second); r.CPUPercent != nil {
		t.Errorf("the first report carries a CPU sample %v before any ended", *r.CPUPercent)
	}
	// The sample is under way, held by the engine: another report
	// neither waits nor starts a second one.
	for eng.asked.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	clock.Advance(sampleEvery)
	reportWithin(t, rt, 5*time.Second)
	time.Sleep(50 * time.Millisecond)
	if n := eng.asked.Load(); n != 1 {
		t.Errorf("the engine was asked %d times while its first answer was held; want one sample at a time", n)
	}
	eng.answers <- answer{cpuNanos: 1e9}
	waitSampled(t, rt)

	// The next sample, 1 s of CPU in 2 s later, is in the report after
	// it.
	clock.Advance(sampleEvery)
	reportWithin(t, rt, 5*time.Second)
	eng.answers <- answer{cpuNanos: 2e9}
	waitSampled(t, rt)
	r := reportWithin(t, rt, 5*time.Second)
	if r.CPUPercent == nil || *r.CPUPercent <= 0 {
		t.Fatalf("after two samples the report's CPU is %v, want a share of the CPU second used", r.CPUPercent)
	}
}

// An engine that fails to say the container's CPU leaves the sample as it
// was: a 0 taken as the count made the next sample the container's whole
// life over two seconds, an idle instance reported busy.
func TestFailedEngineLeavesTheCPUSample(t *testing.T) {
	eng := &slowEngine{answers: make(chan answer, 1)}
	rt, clock := newSampled(t, eng)

	eng.answers <- answer{cpuNanos: 500e9} // 500 s since the container began
	rt.sample(t.Context())
	eng.answers <- answer{err: errors.New("engine busy")}
	clock.Advance(sampleEvery)
	rt.sample(t.Context())
	rt.mu.Lock()
	ticks, cpu := rt.activity.cpuTicks, rt.activity.cpu
	rt.mu.Unlock()
	if ticks != 500*clockTicks {
		t.Errorf("after a failed read the CPU count is %d ticks, want the last one read, %d", ticks, 500*clockTicks)
	}
	if cpu != nil {
		t.Errorf("a CPU share %v from a failed read", *cpu)
	}
	// 20 ms more, 4 s after the last good read: 0.5 % of a CPU.
	eng.answers <- answer{cpuNanos: 500e9 + 2e7}
	clock.Advance(sampleEvery)
	rt.sample(t.Context())
	rt.mu.Lock()
	cpu = rt.activity.cpu
	rt.mu.Unlock()
	if cpu == nil {
		t.Fatal("no CPU share after a good read following the failed one")
	}
	if *cpu > 1 {
		t.Errorf("the CPU share after the failed read is %.1f %%; want at most 0.5 %% (20 ms in 4 s since the last good read)", *cpu)
	}
}
