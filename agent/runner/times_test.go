package runner

import (
	"os/exec"
	"sync"
	"testing"
	"time"
)

// tickClock advances a second at each reading, so that readings order
// the moments they were taken at.
type tickClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *tickClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// A run's times are its Task.Clock's: StartedAt read before any of its
// processes started, EndedAt after they had all exited.
func TestRunTimesAreTheTaskClocksAroundItsProcesses(t *testing.T) {
	clock := &tickClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	tk := task(t, "true")
	tk.ProcessesPerNode = 2
	var mu sync.Mutex
	var starts []time.Time
	tk.Clock = clock
	tk.StartCmd = func(c *exec.Cmd) error {
		mu.Lock()
		starts = append(starts, clock.Now())
		mu.Unlock()
		return c.Start()
	}
	res, _ := run(t, tk)
	after := clock.Now()
	if len(starts) != 2 {
		t.Fatalf("%d processes started, want 2", len(starts))
	}
	if !res.StartedAt.Before(starts[0]) {
		t.Errorf("the run started at %s, not before its first process (%s)", res.StartedAt, starts[0])
	}
	if !res.EndedAt.After(starts[1]) || !res.EndedAt.Before(after) {
		t.Errorf("the run ended at %s, not after its processes started (%s) and before Wait returned (%s)", res.EndedAt, starts[1], after)
	}
}
