package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"unsafe"
)

// A reason keeps its code as an index: every code this package names, and
// one it does not (read back from a store another version wrote), comes
// back as it went in, and a reason is 16 bytes.
func TestReasonCodesRoundTrip(t *testing.T) {
	if got, want := unsafe.Sizeof(Reason{}), unsafe.Sizeof(uintptr(0))+8; got != want {
		t.Errorf("a Reason is %d bytes, want a pointer and a word (%d)", got, want)
	}
	for _, c := range knownCodes {
		if got := NewReason(c, "x").Code(); got != c {
			t.Errorf("NewReason(%q).Code() = %q", c, got)
		}
	}
	if got := WaitingBehind(3, "ws/h").Code(); got != ReasonBehind {
		t.Errorf("WaitingBehind's code = %q", got)
	}
	if got := (Reason{}).Code(); got != "" {
		t.Errorf("the zero reason's code = %q", got)
	}
	future := ReasonCode("a_code_of_a_later_version")
	a, b := NewReason(future, "x"), NewReason(future, "x")
	if a.Code() != future || !a.Same(b) || a.Same(NewReason(ReasonAtMax, "x")) {
		t.Errorf("an unknown code reads back as %q", a.Code())
	}
}

// Unknown codes met by concurrent passes each get one index; past the 255
// an index holds, a code is kept as none rather than as another's.
func TestReasonCodesOfOtherVersions(t *testing.T) {
	keepOtherCodes(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				c := ReasonCode(fmt.Sprintf("other_%d", (i+j)%50))
				if got := NewReason(c, "").Code(); got != c {
					t.Errorf("code %q read back as %q", c, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	for i := range 300 {
		c := ReasonCode(fmt.Sprintf("many_%d", i))
		if got := NewReason(c, "").Code(); got != c && got != "" {
			t.Fatalf("code %q read back as %q", c, got)
		}
	}
	if got := NewReason("many_299", "").Code(); got != "" {
		t.Errorf("the 300th unknown code reads back as %q, want none", got)
	}
	if got := NewReason(ReasonQuota, "").Code(); got != ReasonQuota {
		t.Errorf("a known code after the table filled reads back as %q", got)
	}
}

// keepOtherCodes gives a test the table of other versions' codes as it
// found it back when it ends, so that a test that fills it does not
// change what another one sees, whatever their order.
func keepOtherCodes(t *testing.T) {
	otherCodes.mu.Lock()
	codes, index := slices.Clone(otherCodes.codes), maps.Clone(otherCodes.index)
	otherCodes.mu.Unlock()
	t.Cleanup(func() {
		otherCodes.mu.Lock()
		otherCodes.codes, otherCodes.index = codes, index
		otherCodes.mu.Unlock()
	})
}
