package httpx

import (
	"context"
	"sync/atomic"
)

// failureNoteKey keys a request's FailureNote in its context.
type failureNoteKey struct{}

// FailureNote holds what Errors.Write answered a request it failed with
// a server-side status (5xx, other than an internal error, which is
// logged with its detail where it is written): the server's request log
// prints it beside the status, where the line said only "502" before (a
// notebook's kernel WebSocket refused in CI, with no cause to read).
type FailureNote struct{ msg atomic.Pointer[string] }

// Message is the note's message; "" when nothing was noted.
func (n *FailureNote) Message() string {
	if p := n.msg.Load(); p != nil {
		return *p
	}
	return ""
}

// NoteFailures returns a copy of ctx in which Errors.Write notes the
// message of a 5xx it answers, and the note.
func NoteFailures(ctx context.Context) (context.Context, *FailureNote) {
	n := &FailureNote{}
	return context.WithValue(ctx, failureNoteKey{}, n), n
}

// noteFailure records msg in ctx's FailureNote, if it has one.
func noteFailure(ctx context.Context, msg string) {
	if n, ok := ctx.Value(failureNoteKey{}).(*FailureNote); ok {
		n.msg.Store(&msg)
	}
}
