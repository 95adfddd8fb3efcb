package scheduler

import (
	"math"
	"strconv"
)

// Reason explains why a job was not placed: a code for programs and a
// sentence for people (Message).
//
// Most waiting jobs wait behind the head of their queue, and their
// sentences differ by a count alone ("waiting behind 41273 higher-priority
// or earlier jobs (next: ws/job-7)"). Such a reason keeps the count and the
// head's ID and writes its sentence when asked: 100,000 waiting jobs held
// 100,000 sentences (some 7.5 MB), twice while a pass replaced the last
// pass's reasons. Compare reasons with Same, which compares what they say
// however each keeps it; == is true only for reasons kept alike.
//
// A reason is 24 bytes, a string and a word: its code is an index into
// the codes this process knows (codeIndex), not a string of its own. Up
// to three passes' maps of 100,000 reasons are alive at once at the peak
// of a whole-queue pass (store/live.Reasons), and a 40-byte reason made
// each map 2 MB larger.
type Reason struct {
	// text is the sentence, or, when ahead is above 0, the ID of the job
	// the count is behind.
	text string
	// ahead, above 0, is how many jobs this one waits behind.
	ahead int32
	// code is the reason's code (codeIndex; 0: none).
	code uint8
}

// NewReason returns a reason of code whose sentence is message, a
// complete human sentence, e.g. "waiting for nodes to be provisioned (3
// of 4 ready)".
func NewReason(code ReasonCode, message string) Reason {
	return Reason{code: codeIndex(code), text: message}
}

// WaitingBehind returns the ReasonBehind of a job that waits behind ahead
// jobs (at least 1), the first of them head.
func WaitingBehind(ahead int, head string) Reason {
	return Reason{code: behindIndex, text: head, ahead: int32(min(max(ahead, 1), math.MaxInt32))}
}

// Code returns the reason's machine-readable class ("" for no reason).
func (r Reason) Code() ReasonCode { return codeAt(r.code) }

// Fixed parts of the ReasonBehind message.
const (
	behindPrefix = "waiting behind "
	behindOne    = " higher-priority or earlier job (next: "
	behindMany   = " higher-priority or earlier jobs (next: "
	behindSuffix = ")"
)

// Message returns the reason's sentence.
func (r Reason) Message() string {
	if r.ahead <= 0 {
		return r.text
	}
	return string(r.AppendMessage(make([]byte, 0, len(behindPrefix)+len(behindMany)+len(r.text)+len(behindSuffix)+8)))
}

// AppendMessage appends the reason's sentence to b.
func (r Reason) AppendMessage(b []byte) []byte {
	if r.ahead <= 0 {
		return append(b, r.text...)
	}
	b = append(b, behindPrefix...)
	b = strconv.AppendInt(b, int64(r.ahead), 10)
	if r.ahead == 1 {
		b = append(b, behindOne...)
	} else {
		b = append(b, behindMany...)
	}
	b = append(b, r.text...)
	return append(b, behindSuffix...)
}

// Same reports whether r and o have the same code and sentence, however
// each keeps it (a reason read back from its sentence is the Same as the
// count it was written from).
func (r Reason) Same(o Reason) bool {
	if r.code != o.code {
		return false
	}
	if (r.ahead > 0) == (o.ahead > 0) {
		return r.text == o.text && r.ahead == o.ahead
	}
	if o.ahead > 0 {
		r, o = o, r
	}
	// r keeps a count, o a sentence: compare without keeping r's.
	var buf [128]byte
	return string(r.AppendMessage(buf[:0])) == o.text
}

// IsZero reports whether r is no reason at all.
func (r Reason) IsZero() bool { return r == Reason{} }
