package live_test

import (
	"testing"

	"github.com/shoal-ml/shoal/live"
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
