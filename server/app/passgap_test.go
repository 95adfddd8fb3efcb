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
// waited for that pass when it ran for both.
func TestSubmittedPassRunsBeforeTheChangesPass(t *testing.T) {
	keys := map[string]bool{"ws/cpu": true}
	for _, c := range []struct {
		general bool
		keys    map[string]bool
		want    []control.PassKind
	}{
		{true, keys, []control.PassKind{control.PassSubmitted, control.PassChanges}},
		{false, keys, []control.PassKind{control.PassSubmitted}},
		{true, nil, []control.PassKind{control.PassChanges}},
		{false, nil, []control.PassKind{control.PassChanges}}, // a wake with nothing recorded still looks
	} {
		if got := placementPasses(c.general, c.keys); !slices.Equal(got, c.want) {
			t.Errorf("placementPasses(%v, %v) = %v, want %v", c.general, c.keys, got, c.want)
		}
	}
}
