package scheduler

import (
	"strconv"
	"unsafe"
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
// however each keeps it (== does not compile).
//
// A reason is 16 bytes: a pointer to its text's bytes, and one word
// that packs the text's length, the count and the code (an index into
// the codes this process knows, codeIndex), where a string, a count and a
// code string took 40. Up to three passes' maps of 100,000 reasons are
// alive at once at the peak of a whole-queue pass (store/live.Reasons),
// and each map's slot shrank from 56 to 32 bytes, 3 MB a map.
type Reason struct {
	// noCompare makes == on reasons a compile error: it would compare
	// where the texts lie, not what they say (use Same). First, so that
	// it adds no padding.
	noCompare [0]func()
	// text points at the first byte of the sentence, or, when the count
	// is above 0, of the ID of the job the count is behind
	// (unsafe.StringData). It keeps those bytes alive as a string would,
	// the whole allocation they lie in included: an empty substring may
	// point into its parent, as its string header did.
	text *byte
	// bits packs code (bits 0-7), the count (bits 8-35) and the text's
	// length (bits 36-63).
	bits uint64
}

// The fields packed in Reason.bits.
const (
	codeBits  = 8
	aheadBits = 28
	lenShift  = codeBits + aheadBits
	maxAhead  = 1<<aheadBits - 1
	maxLen    = 1<<(64-lenShift) - 1
)

// pack makes a reason of code, count ahead (0: none) and text, which
// it cuts to maxLen bytes (256 MB: no sentence is that long).
func pack(code uint8, ahead int, text string) Reason {
	if len(text) > maxLen {
		text = text[:maxLen]
	}
	return Reason{text: unsafe.StringData(text), bits: uint64(code) | uint64(min(max(ahead, 0), maxAhead))<<codeBits | uint64(len(text))<<lenShift}
}

// code returns the reason's code index.
func (r Reason) code() uint8 { return uint8(r.bits) }

// ahead returns how many jobs it waits behind (0: the text is the sentence).
func (r Reason) ahead() int { return int(r.bits >> codeBits & maxAhead) }

// str returns the text.
func (r Reason) str() string { return unsafe.String(r.text, int(r.bits>>lenShift)) }

// NewReason returns a reason of code whose sentence is message, a
// complete human sentence, e.g. "waiting for nodes to be provisioned (3
// of 4 ready)".
func NewReason(code ReasonCode, message string) Reason {
	return pack(codeIndex(code), 0, message)
}

// WaitingBehind returns the ReasonBehind of a job that waits behind ahead
// jobs (at least 1, at most 268,435,455), the first of them head.
func WaitingBehind(ahead int, head string) Reason {
	return pack(behindIndex, max(ahead, 1), head)
}

// Code returns the reason's machine-readable class ("" for no reason).
func (r Reason) Code() ReasonCode { return codeAt(r.code()) }

// Fixed parts of the ReasonBehind message.
const (
	behindPrefix = "waiting behind "
	behindOne    = " higher-priority or earlier job (next: "
	behindMany   = " higher-priority or earlier jobs (next: "
	behindSuffix = ")"
)

// Message returns the reason's sentence.
func (r Reason) Message() string {
	if r.ahead() <= 0 {
		return r.str()
	}
	return string(r.AppendMessage(make([]byte, 0, len(behindPrefix)+len(behindMany)+int(r.bits>>lenShift)+len(behindSuffix)+10)))
}

// AppendMessage appends the reason's sentence to b.
func (r Reason) AppendMessage(b []byte) []byte {
	ahead := r.ahead()
	if ahead <= 0 {
		return append(b, r.str()...)
	}
	b = append(b, behindPrefix...)
	b = strconv.AppendInt(b, int64(ahead), 10)
	if ahead == 1 {
		b = append(b, behindOne...)
	} else {
		b = append(b, behindMany...)
	}
	b = append(b, r.str()...)
	return append(b, behindSuffix...)
}

// Same reports whether r and o have the same code and sentence, however
// each keeps it (a reason read back from its sentence is the Same as the
// count it was written from).
func (r Reason) Same(o Reason) bool {
	if r.code() != o.code() {
		return false
	}
	if (r.ahead() > 0) == (o.ahead() > 0) {
		return r.ahead() == o.ahead() && r.str() == o.str()
	}
	if o.ahead() > 0 {
		r, o = o, r
	}
	// r keeps a count, o a sentence: compare without keeping r's.
	var buf [128]byte
	return string(r.AppendMessage(buf[:0])) == o.str()
}

// SameWaiting reports whether a and b hold the same jobs with reasons
// that say the same (see Same): what two passes' Result.Waiting are
// compared with, since reasons have no ==.
func SameWaiting(a, b map[string]Reason) bool {
	if len(a) != len(b) {
		return false
	}
	for id, r := range a {
		if o, ok := b[id]; !ok || !r.Same(o) {
			return false
		}
	}
	return true
}

// String returns the code and the sentence, for logs and test failures
// (a reason's fields are a pointer and packed bits).
func (r Reason) String() string { return string(r.Code()) + ": " + r.Message() }

// IsZero reports whether r is no reason at all: no code and no text.
func (r Reason) IsZero() bool { return r.bits == 0 }
