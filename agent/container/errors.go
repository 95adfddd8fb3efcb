package container

import (
	"errors"
	"fmt"
)

// The kinds of failure the agent acts on differently: a job whose image
// is not found, unauthorized, on a registry the node cannot reach, or
// does not fit fails with the registry's words and does not count as the
// node's loss; a node with no engine takes no container work.
var (
	// ErrNotFound: no such image (locally or in the registry) or
	// container.
	ErrNotFound = errors.New("not found")
	// ErrUnauthorized: the registry refused the credentials (or their
	// absence).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrNoSpace: the host's storage is full.
	ErrNoSpace = errors.New("no space left")
	// ErrInvalid: the request itself is wrong (a malformed reference, a
	// missing Dockerfile, a bad spec field, a failing build step).
	ErrInvalid = errors.New("invalid")
	// ErrUnreachable: the image's registry could not be reached (the
	// connection refused, its name not resolved, no route, TLS refused):
	// the image cannot be got from where the job says it is.
	ErrUnreachable = errors.New("registry unreachable")
	// ErrInUse: an image a container still uses.
	ErrInUse = errors.New("in use")
	// ErrRuntimeMissing: no engine answers on this host.
	ErrRuntimeMissing = errors.New("container runtime missing")
)

// Error is a failure with its kind (one of the sentinels above, matched
// by errors.Is), what was being done, and the engine's or registry's own
// words.
type Error struct {
	Kind error  // a sentinel: ErrNotFound, ErrUnauthorized, …
	Op   string // "pull 127.0.0.1:5000/team/train:3"
	Msg  string // the engine's or registry's words
}

// Error says what failed, how, and in whose words.
func (e *Error) Error() string { return fmt.Sprintf("%s: %s: %s", e.Op, e.Kind, e.Msg) }

// Is matches the error's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// errorf makes an Error of kind for op.
func errorf(kind error, op, format string, args ...any) *Error {
	return &Error{Kind: kind, Op: op, Msg: fmt.Sprintf(format, args...)}
}
