package core

import (
	"errors"
	"fmt"
)

// Error codes. They are mapped to HTTP status codes only in the api package
// and back to these codes by its client, so callers test codes, never text.
const (
	ECONFLICT       = "conflict"            // the resource exists or an immutable field differs
	EINTERNAL       = "internal"            // a bug or an unavailable dependency; details are logged, not shown
	EINVALID        = "invalid"             // the input breaks a rule; Field names the offending key
	ENOTFOUND       = "not_found"           // no such resource
	EUNAUTHORIZED   = "unauthorized"        // no credential, or one that is not valid
	EFORBIDDEN      = "forbidden"           // a valid credential without the right
	EQUOTA          = "quota_exceeded"      // the request does not fit the quota
	EPRECONDITION   = "precondition_failed" // a stale If-Match / ETag
	ENOTIMPLEMENTED = "not_implemented"     // an optional capability the backend lacks
	EUNAVAILABLE    = "unavailable"         // a dependency (an instance's application) does not answer yet
	ESTORAGEFULL    = "storage_full"        // the store's disk is full: nothing was changed; retry once space is freed
)

// Error is the one error type Shoal's layers exchange. Read it with
// errors.As or the ErrorCode / ErrorMessage helpers.
type Error struct {
	// Code is one of the E* constants.
	Code string
	// Message is shown to the user as is; it never contains secrets.
	Message string
	// Field is the input key the error is about, when there is one
	// (for example "max_instances" or "ssh_settings.admin_username").
	Field string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("shoal error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldErrorf returns an EINVALID error about field. The message is prefixed
// with the field name so that it reads well on its own in a terminal.
func FieldErrorf(field, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err when it is (or wraps) an *Error, and
// EINTERNAL for any other non-nil error.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing message of err; errors that are not
// *Error are internal and get a generic message so no detail leaks.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// ErrorField returns the field an *Error names, or "".
func ErrorField(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

// Transient reports whether the code of a server's answer says a retry
// may succeed without anything changing on the caller's side: an internal
// error, a dependency that does not answer yet, or a store whose disk is
// full. Agents keep work they could not report on such answers and retry.
func Transient(code string) bool {
	return code == EINTERNAL || code == EUNAVAILABLE || code == ESTORAGEFULL
}
