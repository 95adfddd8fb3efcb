package scheduler

import "testing"

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
	if !(Reason{}).IsZero() || WaitingBehind(1, "a").IsZero() {
		t.Error("IsZero")
	}
}
