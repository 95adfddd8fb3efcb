package container

import (
	"errors"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"
)

// classify turns an engine error into an Error of the right kind. The
// client gives HTTP-status-derived kinds (errdefs) for request errors;
// the errors inside a pull's or a build's JSON stream carry only text,
// so for those (and for engines that answer 500 for everything, as
// podman does for a registry's refusal) the registry's standard error
// codes are read from the text: the OCI distribution spec's codes
// (MANIFEST_UNKNOWN as "manifest unknown", "unauthorized", "denied") and
// the kernel's "no space left on device". The words themselves are kept
// in Msg.
func classify(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	msg := err.Error()
	switch {
	case client.IsErrConnectionFailed(err):
		return errorf(ErrRuntimeMissing, op, "%s", msg)
	case cerrdefs.IsUnauthorized(err) || cerrdefs.IsPermissionDenied(err):
		return errorf(ErrUnauthorized, op, "%s", msg)
	case cerrdefs.IsConflict(err) && strings.Contains(strings.ToLower(msg), "in use"):
		return errorf(ErrInUse, op, "%s", msg)
	}
	if kind := kindOfText(msg); kind != nil {
		return errorf(kind, op, "%s", msg)
	}
	switch {
	case cerrdefs.IsNotFound(err):
		return errorf(ErrNotFound, op, "%s", msg)
	case cerrdefs.IsInvalidArgument(err):
		return errorf(ErrInvalid, op, "%s", msg)
	case cerrdefs.IsConflict(err):
		return errorf(ErrInUse, op, "%s", msg)
	}
	return &Error{Kind: errOther, Op: op, Msg: msg}
}

// errOther is the kind of an engine failure none of the sentinels
// describe (the node may well be at fault).
var errOther = errors.New("engine error")

// textKinds are the registry's and the kernel's words for each kind, as
// engines relay them (Docker and podman alike), lower-cased.
var textKinds = []struct {
	kind  error
	words []string
}{
	{ErrNoSpace, []string{"no space left on device"}},
	{ErrUnauthorized, []string{"unauthorized", "authentication required", "denied:", "access denied",
		"invalid username/password", "incorrect username or password"}},
	{ErrNotFound, []string{"manifest unknown", "name unknown", "not found", "no such image",
		"repository does not exist", "no such container"}},
	{ErrInUse, []string{"image is in use", "image used by", "being used by", "is in use"}},
}

// kindOfText finds the kind a message's words name, nil when none.
func kindOfText(msg string) error {
	low := strings.ToLower(msg)
	for _, k := range textKinds {
		for _, w := range k.words {
			if strings.Contains(low, w) {
				return k.kind
			}
		}
	}
	return nil
}

// classifyPull is classify for a pull: an engine failure the sentinels do
// not describe whose words say the registry could not be reached is
// ErrUnreachable. Only a pull's errors are read so: the engine relays
// the registry's dial or TLS failure in its text, whereas a connection
// to the engine itself that fails is the client's own error
// (ErrRuntimeMissing), never read from text.
func classifyPull(op string, err error) error {
	err = classify(op, err)
	var e *Error
	if errors.As(err, &e) && e.Kind == errOther && unreachableText(e.Msg) {
		return &Error{Kind: ErrUnreachable, Op: e.Op, Msg: e.Msg}
	}
	return err
}

// unreachableWords are Go's net and TLS errors as Docker and podman
// relay them when a registry cannot be reached, lower-cased.
var unreachableWords = []string{
	"pinging container registry", "connection refused", "no such host", "no route to host",
	"network is unreachable", "i/o timeout", "temporary failure in name resolution", "server misbehaving",
	"tls handshake timeout", "server gave http response to https client", "x509: ", "tls: ",
	"connection reset by peer", "client.timeout exceeded", "request canceled while waiting for connection",
}

// unreachableText reports whether msg says a registry could not be
// reached.
func unreachableText(msg string) bool {
	low := strings.ToLower(msg)
	for _, w := range unreachableWords {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}
