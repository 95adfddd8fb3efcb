package app

import (
	"slices"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control"
)

// Full passes are a tick apart, four times their duration when that is
// longer, and never more than five ticks apart.
func TestFullPassGap(t *testing.T) {
	tick := 200 * time.Millisecond
	for _, c := range []struct{ took, want time.Duration }{
		{10 * time.Millisecond, tick},
		{100 * time.Millisecond, 400 * time.Millisecond},
		{2 * time.Second, time.Second},
	} {
		if got := fullPassGap(tick, c.took); got != c.want {
			t.Errorf("after a %v pass: %v, want %v", c.took, got, c.want)
		}
	}
}

// The whole queue is read a tick apart when that is cheap, ten times the
// reading pass's duration apart when not, and at least every 30 s.
func TestWholeQueueGap(t *testing.T) {
	tick := 200 * time.Millisecond
	for _, c := range []struct{ took, want time.Duration }{
		{5 * time.Millisecond, tick},
		{300 * time.Millisecond, 3 * time.Second},
		{time.Minute, 30 * time.Second},
	} {
		if got := wholeQueueGap(tick, c.took); got != c.want {
			t.Errorf("after a %v pass: %v, want %v", c.took, got, c.want)
		}
	}
}

// A wake with new jobs and a change runs the new jobs' pass first: it
// costs a fraction of the pass over every queue, and their decisions
// waited for that pass when it ran for both. A change confined to some
// computes (a node joined) runs a pass over theirs alone, with the new
// jobs' when there are some, unless a change of any kind runs the pass
// over every queue anyway.
func TestSubmittedPassRunsBeforeTheChangesPass(t *testing.T) {
	keys := map[string]bool{"ws/cpu": true}
	changed := map[string]bool{"ws/gpu": true}
	for _, c := range []struct {
		w    wakeup
		want []control.PassKind
	}{
		{wakeup{general: true, submitted: keys}, []control.PassKind{control.PassSubmitted, control.PassChanges}},
		{wakeup{submitted: keys}, []control.PassKind{control.PassSubmitted}},
		{wakeup{general: true}, []control.PassKind{control.PassChanges}},
		{wakeup{}, []control.PassKind{control.PassChanges}}, // a wake with nothing recorded still looks
		{wakeup{changed: changed}, []control.PassKind{control.PassComputes}},
		{wakeup{submitted: keys, changed: changed}, []control.PassKind{control.PassSubmitted}}, // over both: one pass serves them
		{wakeup{general: true, changed: changed}, []control.PassKind{control.PassChanges}},
	} {
		if got := placementPasses(c.w); !slices.Equal(got, c.want) {
			t.Errorf("placementPasses(%+v) = %v, want %v", c.w, got, c.want)
		}
	}
}
