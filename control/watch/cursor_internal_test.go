package watch

import (
	"fmt"
	"testing"
	"time"
)

// A list cut by the store's limit ends the cursor at its last onset's
// time, even when the batch takes all of it; a complete list moves the
// cursor to the window's end.
func TestDueStopsAtTheLastOnsetOfACutList(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var list []onset
	for i := range maxBatch - 1 {
		list = append(list, onset{key: fmt.Sprintf("a%04d", i), at: t0.Add(time.Second)})
	}
	// The last times of the list, shared: the batch takes them all.
	for i := range 3 {
		list = append(list, onset{key: fmt.Sprintf("b%d", i), at: t0.Add(2 * time.Second)})
	}
	upTo := t0.Add(time.Hour)
	batch, cursor := due(list, t0, upTo, false)
	if len(batch) != len(list) || !cursor.Equal(t0.Add(2*time.Second)) {
		t.Errorf("a cut list: %d of %d onsets, cursor %v; want all, cursor at the last onset", len(batch), len(list), cursor)
	}
	batch, cursor = due(list, t0, upTo, true)
	if len(batch) != len(list) || !cursor.Equal(upTo) {
		t.Errorf("a complete list: %d of %d onsets, cursor %v; want all, cursor at the window's end", len(batch), len(list), cursor)
	}
	// A longer list is cut at a batch, after the ties of its last.
	list = append(list, onset{key: "c", at: t0.Add(3 * time.Second)})
	batch, cursor = due(list, t0, upTo, true)
	if len(batch) != len(list)-1 || !cursor.Equal(t0.Add(2*time.Second)) {
		t.Errorf("a list over a batch: %d onsets, cursor %v; want %d, cursor at the ties' time", len(batch), cursor, len(list)-1)
	}
	// A list said to be cut with nothing in the window leaves the cursor.
	if batch, cursor = due([]onset{{key: "x", at: t0}}, t0, upTo, false); len(batch) != 0 || !cursor.Equal(t0) {
		t.Errorf("a cut list with nothing in the window: %d onsets, cursor %v; want none, the cursor left", len(batch), cursor)
	}
	// Onsets outside the window are left out.
	batch, _ = due([]onset{{key: "x", at: t0}, {key: "y", at: upTo.Add(time.Second)}}, t0, upTo, true)
	if len(batch) != 0 {
		t.Errorf("onsets outside (after, upTo]: %d taken", len(batch))
	}
}
