package scheduler

import (
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// A reason kept as a count behind a head says the sentence it always
// said, and is the Same as that sentence read back (the store keeps
// sentences); a different count or head is not.
func TestReasonBehindSaysItsSentence(t *testing.T) {
	for _, c := range []struct {
		ahead int
		want  string
	}{
		{1, "waiting behind 1 higher-priority or earlier job (next: ws/head)"},
		{2, "waiting behind 2 higher-priority or earlier jobs (next: ws/head)"},
		{41273, "waiting behind 41273 higher-priority or earlier jobs (next: ws/head)"},
	} {
		r := WaitingBehind(c.ahead, "ws/head")
		if got := r.Message(); got != c.want {
			t.Errorf("WaitingBehind(%d).Message() = %q, want %q", c.ahead, got, c.want)
		}
		read := NewReason(ReasonBehind, c.want)
		if !r.Same(read) || !read.Same(r) {
			t.Errorf("WaitingBehind(%d) is not the Same as its sentence read back", c.ahead)
		}
		if r.Same(WaitingBehind(c.ahead+1, "ws/head")) || r.Same(WaitingBehind(c.ahead, "ws/other")) {
			t.Errorf("WaitingBehind(%d) is the Same as another count or head", c.ahead)
		}
		if r.Same(NewReason(ReasonAtMax, c.want)) {
			t.Errorf("WaitingBehind(%d) is the Same as another code with its sentence", c.ahead)
		}
	}
	if r := NewReason(ReasonQuota, "quota exhausted: x"); r.Message() != "quota exhausted: x" || !r.Same(NewReason(ReasonQuota, "quota exhausted: x")) {
		t.Errorf("NewReason keeps %q", r.Message())
	}
	if !(Reason{}).IsZero() || WaitingBehind(1, "a").IsZero() || NewReason("", "x").IsZero() || NewReason(ReasonQuota, "").IsZero() {
		t.Error("IsZero")
	}
}

// The packed fields keep what they are given: a count up to its 28 bits
// (beyond, the largest), a code beside the longest count, texts of any
// length and none, and a text the caller's buffer no longer holds.
func TestReasonPacksItsFields(t *testing.T) {
	for _, ahead := range []int{1, 2, 1000, maxAhead - 1, maxAhead} {
		r := WaitingBehind(ahead, "ws/head")
		if r.ahead() != ahead || r.Code() != ReasonBehind || r.str() != "ws/head" {
			t.Errorf("WaitingBehind(%d) = ahead %d, code %q, head %q", ahead, r.ahead(), r.Code(), r.str())
		}
	}
	if r := WaitingBehind(maxAhead+5, "h"); r.ahead() != maxAhead || r.Code() != ReasonBehind || r.str() != "h" {
		t.Errorf("a count past 28 bits = ahead %d, code %q, head %q", r.ahead(), r.Code(), r.str())
	}
	if r := WaitingBehind(0, ""); r.ahead() != 1 || r.str() != "" || r.Message() != "waiting behind 1 higher-priority or earlier job (next: )" {
		t.Errorf("WaitingBehind(0, \"\") says %q", r.Message())
	}
	long := strings.Repeat("x", 100_000)
	if r := NewReason(ReasonNoNodes, long); r.Message() != long || r.Code() != ReasonNoNodes {
		t.Error("a 100,000-byte sentence is not kept whole")
	}
	// The reason alone keeps its text's bytes: the buffer they lie in
	// is not collected (its cleanup does not run) while the reason
	// lives, and they still say what they said.
	cleaned := make(chan struct{}, 1)
	r := reasonOverBuffer(cleaned)
	for range 3 {
		runtime.GC()
	}
	select {
	case <-cleaned:
		t.Fatal("the text's buffer was collected while a reason held it")
	case <-time.After(50 * time.Millisecond):
	}
	if got, want := r.Message(), "quota exhausted: "+strings.Repeat("g", 47); got != want {
		t.Errorf("the sentence is now %q", got)
	}
	runtime.KeepAlive(r)
}

// reasonOverBuffer returns a reason whose text lies in a heap buffer of
// its own, with a cleanup that says when the buffer is collected.
//
//go:noinline
func reasonOverBuffer(cleaned chan<- struct{}) Reason {
	b := make([]byte, 64)
	copy(b, "quota exhausted: "+strings.Repeat("g", 47))
	runtime.AddCleanup(&b[0], func(ch chan<- struct{}) { ch <- struct{}{} }, cleaned)
	return NewReason(ReasonQuota, unsafe.String(&b[0], len(b)))
}

// SameWaiting compares two passes' waiting jobs by what their reasons
// say: a count and its sentence read back are the same; another job, a
// missing one or another sentence is not.
func TestSameWaiting(t *testing.T) {
	count := map[string]Reason{"ws/a": WaitingBehind(2, "ws/h"), "ws/b": NewReason(ReasonQuota, "q")}
	read := map[string]Reason{"ws/a": NewReason(ReasonBehind, WaitingBehind(2, "ws/h").Message()), "ws/b": NewReason(ReasonQuota, "q")}
	if !SameWaiting(count, read) || !SameWaiting(read, count) || !SameWaiting(nil, map[string]Reason{}) {
		t.Error("the same reasons kept two ways differ")
	}
	for name, other := range map[string]map[string]Reason{
		"a job fewer":      {"ws/a": WaitingBehind(2, "ws/h")},
		"another job":      {"ws/a": WaitingBehind(2, "ws/h"), "ws/c": NewReason(ReasonQuota, "q")},
		"another count":    {"ws/a": WaitingBehind(3, "ws/h"), "ws/b": NewReason(ReasonQuota, "q")},
		"another sentence": {"ws/a": WaitingBehind(2, "ws/h"), "ws/b": NewReason(ReasonQuota, "r")},
		"another code":     {"ws/a": WaitingBehind(2, "ws/h"), "ws/b": NewReason(ReasonAtMax, "q")},
	} {
		if SameWaiting(count, other) || SameWaiting(other, count) {
			t.Errorf("%s: SameWaiting says the same", name)
		}
	}
}
