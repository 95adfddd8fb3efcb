package live_test

import (
	"testing"

	"github.com/shoal-ml/shoal/store/live"
)

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A wake closes the channel of the nodes named only, once: the next Wait
// waits for the next wake; WakeAll wakes every waiter.
func TestHub(t *testing.T) {
	h := live.NewHub()
	a, b := h.Wait("a"), h.Wait("b")
	if h.Wait("a") != a {
		t.Error("two waits of one node before a wake got different channels")
	}
	h.Wake("a", "c")
	if !closed(a) || closed(b) {
		t.Errorf("after Wake(a, c): a closed %v, b closed %v; want true, false", closed(a), closed(b))
	}
	a2 := h.Wait("a")
	if closed(a2) {
		t.Error("a wait after a wake is already closed")
	}
	h.WakeAll()
	if !closed(a2) || !closed(b) {
		t.Errorf("after WakeAll: a closed %v, b closed %v", closed(a2), closed(b))
	}
}

// Notify calls its function once at the node's next wake, never after a
// stop that prevented it, and leaves nothing behind either way.
func TestHubNotify(t *testing.T) {
	h := live.NewHub()
	var calls []string
	h.Notify("a", func() { calls = append(calls, "a1") })
	stopB := h.Notify("b", func() { calls = append(calls, "b") })
	h.Wake("a")
	h.Wake("a") // a second wake finds nothing left to call
	if len(calls) != 1 || calls[0] != "a1" {
		t.Fatalf("after two wakes of a: calls %v, want [a1]", calls)
	}
	if !stopB() {
		t.Error("stop before any wake said it prevented nothing")
	}
	if stopB() {
		t.Error("a second stop said it prevented the call again")
	}
	h.Wake("b")
	if len(calls) != 1 {
		t.Errorf("a stopped note was called: %v", calls)
	}
	stopC := h.Notify("c", func() { calls = append(calls, "c") })
	h.WakeAll()
	if len(calls) != 2 || calls[1] != "c" {
		t.Errorf("WakeAll did not call c's note: %v", calls)
	}
	if stopC() {
		t.Error("stop after the call said it prevented it")
	}
}

// A note's function may register the next one: it runs after the hub's
// lock is released.
func TestHubNotifyFromNote(t *testing.T) {
	h := live.NewHub()
	n := 0
	var again func()
	again = func() {
		n++
		h.Notify("a", again)
	}
	h.Notify("a", again)
	h.Wake("a")
	h.Wake("a")
	if n != 2 {
		t.Errorf("the re-registering note ran %d times over two wakes, want 2", n)
	}
}

// Two notes of one node: stopping one leaves the other to be called.
func TestHubNotifyTwo(t *testing.T) {
	h := live.NewHub()
	var calls []string
	stop1 := h.Notify("a", func() { calls = append(calls, "1") })
	h.Notify("a", func() { calls = append(calls, "2") })
	if !stop1() {
		t.Fatal("stop of a pending note said it prevented nothing")
	}
	h.Wake("a")
	if len(calls) != 1 || calls[0] != "2" {
		t.Errorf("calls %v, want [2]", calls)
	}
}
