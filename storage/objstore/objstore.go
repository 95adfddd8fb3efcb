// Package objstore reads and writes objects in the places Azure ML users
// keep data: Azure Blob containers (and ADLS Gen2 through their Blob
// endpoint), S3-compatible buckets, plain HTTP(S) URLs and paths mounted
// on every node. Each place is a Source; Download and Upload move a
// folder of objects between a Source and a local directory.
//
// Every network client dials through a Dialer its caller gives: the
// agent passes the job's network namespace's dialer wrapped by
// GuardDialer, so that a fetch reaches only what the job's own process
// could, never the server, the agent or the metadata address.
package objstore

import (
	"context"
	"errors"
	"io"
	"net"
)

// Object is one object of a Source: its key (slash-separated, relative to
// the source's root), its size in bytes and a version tag (an ETag, or a
// size and modification time for files) that changes when its bytes do.
type Object struct {
	Key  string
	Size int64
	ETag string
}

// Source is one place objects live.
type Source interface {
	// List returns the objects whose keys start with prefix, sorted by key.
	List(ctx context.Context, prefix string) ([]Object, error)
	// Open streams one object's bytes and says its size (-1 if unknown).
	Open(ctx context.Context, key string) (io.ReadCloser, int64, error)
	// Put writes one object of size bytes (-1 if unknown) from r.
	Put(ctx context.Context, key string, r io.Reader, size int64) error
}

// Dialer opens a network connection, as net.Dialer.DialContext does.
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// The classes of failure a caller acts on, matched with errors.Is: a job
// whose input is missing, refused or unreachable fails at once with the
// source's words (input_failed), spending no retry.
var (
	// ErrNotFound: the container, bucket, object or path does not exist.
	ErrNotFound = errors.New("not found")
	// ErrDenied: the source refused the credential (HTTP 401/403, a bad
	// key or SAS token, anonymous access off).
	ErrDenied = errors.New("access denied")
	// ErrUnreachable: the source could not be reached (DNS, connection
	// refused, no route, TLS, or an address GuardDialer refuses).
	ErrUnreachable = errors.New("unreachable")
	// ErrUnsupported: the source cannot do what was asked (list a plain
	// URL, write to one, a credential kind Shoal does not take).
	ErrUnsupported = errors.New("not supported")
)

// Error is a failure with the source's own words (Msg: the HTTP status,
// the storage error code and message) and its class (Kind, one of the
// Err* values above, or nil when it is none of them).
type Error struct {
	Kind error
	Msg  string
	Err  error // the underlying error, if any; never shown (it may hold a URL with a SAS token)
}

// Error returns the source's words.
func (e *Error) Error() string { return e.Msg }

// Is matches the error's class.
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// Unwrap returns the underlying error, so that errors.Is finds
// context.Canceled and the like through it.
func (e *Error) Unwrap() error { return e.Err }

// errorf makes an Error of kind with a message.
func errorf(kind, err error, msg string) *Error {
	return &Error{Kind: kind, Msg: msg, Err: err}
}
