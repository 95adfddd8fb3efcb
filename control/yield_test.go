package control_test

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control"
)

// A pass over the whole queue goes on at once when no submission's pass
// waits or runs, pauses while one does and goes on when it is done, and
// never pauses for longer than its bound however many keep coming.
func TestWholeQueuePassYieldsToSubmissions(t *testing.T) {
	c := &control.Controller{}
	c.YieldToSubmissions(time.Hour) // nothing submitting: returns at once

	c.Submitting(1)
	done := make(chan struct{})
	go func() {
		c.YieldToSubmissions(time.Hour)
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("the pass did not pause for a submission's pass in progress")
	case <-time.After(20 * time.Millisecond):
	}
	c.Submitting(-1)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the pass still paused after the submission's pass ended")
	}

	// Submissions that never stop: it pauses, then goes on.
	c.Submitting(1)
	defer c.Submitting(-1)
	stuck := make(chan struct{})
	go func() {
		c.YieldToSubmissions(20 * time.Millisecond)
		close(stuck)
	}()
	select {
	case <-stuck:
	case <-time.After(10 * time.Second):
		t.Fatal("the pass waited for submissions without bound")
	}
}
