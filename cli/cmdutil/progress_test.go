package cmdutil

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a WaitClock whose Sleep moves time on at once.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return nil
}

// A live line longer than the terminal is cut to its width, keeping
// the elapsed time: a wrapped line would not be rewritten by \r.
func TestProgressLiveLineFitsTheTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := &Progress{w: &buf, mode: progressLive, clock: newFakeClock(), what: "Deleting compute c", width: 40}
	p.began = p.clock.Now()
	p.Set(strings.Repeat("x", 100))
	line := strings.TrimSuffix(strings.TrimPrefix(buf.String(), "\r"), "\033[K")
	if n := len([]rune(line)); n != 39 || !strings.HasSuffix(line, "x… (0s)") {
		t.Errorf("live line %q is %d columns on a 40-column terminal, want 39 ending with the elapsed time", line, n)
	}
}

// A note clears the live line, stays, and the status is drawn again
// under it; Done clears the line and prints the last state.
func TestProgressNoteAndDone(t *testing.T) {
	var buf bytes.Buffer
	clock := newFakeClock()
	p := &Progress{w: &buf, mode: progressLive, clock: clock, what: "Job j", width: 80, began: clock.Now()}
	p.Set("Queued: no nodes")
	p.Note("a note")
	_ = clock.Sleep(context.Background(), 3*time.Second)
	p.Done("over")
	p.Set("Queued: after the end") // ignored: the wait is over
	want := "\rJob j: Queued: no nodes (0s)\033[K" + "\r\033[Ka note\n" + "\rJob j: Queued: no nodes (0s)\033[K" + "\r\033[KJob j: over (3s)\n"
	if buf.String() != want {
		t.Errorf("live output\n%q\nwant\n%q", buf.String(), want)
	}
	buf.Reset()
	p = &Progress{w: &buf, mode: progressLines, clock: clock, what: "Job j", began: clock.Now()}
	p.Set("Queued: no nodes")
	p.Tick()
	p.Set("Queued: no nodes")
	p.Set("Preparing: pulling python:3.12")
	p.Done("")
	if want := "Job j: Queued: no nodes (0s)\nJob j: Preparing: pulling python:3.12 (0s)\n"; buf.String() != want {
		t.Errorf("plain output\n%q\nwant\n%q", buf.String(), want)
	}
}
