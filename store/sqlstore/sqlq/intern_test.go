package sqlq

import (
	"testing"
	"unsafe"
)

// The queue's rows share one string per workspace, compute and image:
// equal bytes give the same string (one allocation, not one per row), and
// the bytes scanned into may be reused after.
func TestInternerSharesStrings(t *testing.T) {
	var in Interner
	buf := []byte("default")
	a := in.Get(buf)
	copy(buf, "XXXXXXX") // the driver reuses its buffer for the next row
	b := in.Get([]byte("default"))
	if a != "default" || b != "default" {
		t.Fatalf("got %q and %q, want default twice", a, b)
	}
	if unsafe.StringData(a) != unsafe.StringData(b) {
		t.Error("equal bytes gave two strings, want one shared")
	}
	if got := in.Get(nil); got != "" {
		t.Errorf("empty bytes gave %q", got)
	}
}
