package watch_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
)

// A job queued past the threshold is told once, with its wait reason;
// one that started before is not; a restarted loop (a new server over
// the same store) tells nothing again, and a later job is told when its
// own wait crosses the threshold.
func TestQueuedTooLongOnceWithItsReasonAcrossARestart(t *testing.T) {
	h := newHarness(t)
	h.update(func(tx store.Tx) error {
		h.submit(tx, "waits")
		h.submit(tx, "starts")
		return tx.PutWaitReasons([]*job.WaitReason{{Workspace: "ws", Job: "waits", Code: "at_max_instances",
			Message: "gpu is at max_instances 2"}})
	})
	h.clock.Advance(20 * time.Minute)
	h.update(func(tx store.Tx) error {
		h.submit(tx, "later")
		j, err := tx.GetJob("ws", "starts")
		if err != nil {
			return err
		}
		j.Status = job.JobRunning
		return tx.UpdateJob(j)
	})
	l := h.loop()
	h.pass(l, 5*time.Minute) // 25 min: nobody yet
	if got := h.events(core.ResourceJob, core.EventQueuedTooLong); len(got) != 0 {
		t.Fatalf("events before the threshold: %q", got)
	}
	h.pass(l, 6*time.Minute) // 31 min
	got := h.events(core.ResourceJob, core.EventQueuedTooLong)
	if names(got) != "waits" {
		t.Fatalf("queued_too_long after 31 min = %q, want the waiting job alone", got)
	}
	for _, want := range []string{"31m0s", "over the 30m0s threshold", "gpu is at max_instances 2 (at_max_instances)"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("reason %q lacks %q", got[0], want)
		}
	}
	// A restart: a new loop over the same store tells nothing again.
	h.pass(h.loop(), time.Minute)
	h.pass(l, time.Minute)
	if got := h.events(core.ResourceJob, core.EventQueuedTooLong); names(got) != "waits" {
		t.Fatalf("after a restart = %q, want the one event", got)
	}
	// "later" crosses 20 minutes after "waits".
	h.pass(h.loop(), 20*time.Minute)
	got = h.events(core.ResourceJob, core.EventQueuedTooLong)
	if names(got) != "waits later" {
		t.Fatalf("after 53 min = %q, want waits then later", got)
	}
	if !strings.Contains(got[1], "the scheduler has not said why yet") {
		t.Errorf("a job without a wait reason: %q", got[1])
	}
}

// 1,200 jobs crossing at once are told over passes of at most 500 events,
// each exactly once.
func TestQueuedTooLongInBoundedBatches(t *testing.T) {
	h := newHarness(t)
	h.update(func(tx store.Tx) error {
		for i := range 1200 {
			h.submit(tx, fmt.Sprintf("j%04d", i))
			if i%3 == 0 { // several jobs share each submission time
				h.clock.Advance(time.Millisecond)
			}
		}
		return nil
	})
	l := h.loop()
	var counts []int
	for range 4 {
		h.pass(l, 31*time.Minute)
		counts = append(counts, len(h.events(core.ResourceJob, core.EventQueuedTooLong)))
	}
	if counts[0] < 500 || counts[0] > 502 || counts[2] != 1200 || counts[3] != 1200 {
		t.Fatalf("events after each pass = %v, want about 500, 1000, then all 1200 once", counts)
	}
	seen := map[string]bool{}
	for _, l := range h.events(core.ResourceJob, core.EventQueuedTooLong) {
		n := names([]string{l})
		if seen[n] {
			t.Fatalf("job %s told twice", n)
		}
		seen[n] = true
	}
}

// Passes closer together than watch.Every look at nothing.
func TestPassesWithinEveryWatchNothing(t *testing.T) {
	h := newHarness(t)
	h.update(func(tx store.Tx) error { h.submit(tx, "a"); return nil })
	h.clock.Advance(20 * time.Second)
	h.update(func(tx store.Tx) error { h.submit(tx, "b"); return nil })
	l := h.loop()
	h.pass(l, 29*time.Minute+50*time.Second) // a at 30m10s, b at 29m50s
	if got := h.events(core.ResourceJob, core.EventQueuedTooLong); names(got) != "a" {
		t.Fatalf("got %q, want a", got)
	}
	h.pass(l, 10*time.Second) // b at 30m, but within Every
	if got := h.events(core.ResourceJob, core.EventQueuedTooLong); names(got) != "a" {
		t.Fatalf("a pass within Every told %q", got)
	}
	h.pass(l, 5*time.Second) // Every after the last look
	if got := h.events(core.ResourceJob, core.EventQueuedTooLong); names(got) != "a b" {
		t.Fatalf("after Every: %q, want a b", got)
	}
}

// 700 jobs submitted in the same microsecond are more than a batch: they
// are told together in one pass (a cursor between them would lose
// those after it), then the 300 submitted later in the next passes.
func TestQueuedTooLongKeepsJobsOfOneTimeTogether(t *testing.T) {
	h := newHarness(t)
	h.update(func(tx store.Tx) error {
		for i := range 700 {
			h.submit(tx, fmt.Sprintf("same%04d", i))
		}
		for i := range 300 {
			h.clock.Advance(time.Millisecond)
			h.submit(tx, fmt.Sprintf("later%04d", i))
		}
		return nil
	})
	l := h.loop()
	var counts []int
	for range 3 {
		h.pass(l, 31*time.Minute)
		counts = append(counts, len(h.events(core.ResourceJob, core.EventQueuedTooLong)))
	}
	if counts[0] != 700 || counts[1] != 1000 || counts[2] != 1000 {
		t.Fatalf("events after each pass = %v, want the 700 of one time at once, then the 300 later", counts)
	}
}
