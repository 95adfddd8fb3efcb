// Package coretest holds test helpers every kind's tests share.
package coretest

import (
	"errors"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
)

// WantFieldError checks that err is an EINVALID *core.Error naming field,
// whose message contains every fragment (case-insensitively).
func WantFieldError(t testing.TB, err error, field string, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want EINVALID on %q", field)
	}
	if code := core.ErrorCode(err); code != core.EINVALID {
		t.Errorf("code = %q, want %q (err: %v)", code, core.EINVALID, err)
	}
	if got := core.ErrorField(err); got != field {
		t.Errorf("field = %q, want %q (message: %s)", got, field, core.ErrorMessage(err))
	}
	msg := core.ErrorMessage(err)
	for _, f := range fragments {
		if !strings.Contains(strings.ToLower(msg), strings.ToLower(f)) {
			t.Errorf("message %q does not contain %q", msg, f)
		}
	}
}

// FuzzCheckError fails unless err is an EINVALID *core.Error with a message.
func FuzzCheckError(t testing.TB, step string, doc []byte, err error) {
	t.Helper()
	var e *core.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: error %T %v is not a *core.Error (document %q)", step, err, err, doc)
	}
	if e.Code != core.EINVALID {
		t.Fatalf("%s: code %q, want %q: %s (document %q)", step, e.Code, core.EINVALID, e.Message, doc)
	}
	if e.Message == "" {
		t.Fatalf("%s: empty message (document %q)", step, doc)
	}
}
