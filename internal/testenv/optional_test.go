package testenv_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// An optional dependency that is missing skips the test even under
// SHOAL_TEST_REQUIRE_ALL (the test command does not install it); a
// present one runs the test.
func TestOptional(t *testing.T) {
	t.Setenv(testenv.RequireAllVar, "1")
	var r recorder
	testenv.Optional(&r, "Docker's daemon", func() error { return errors.New("no /var/run/docker.sock") }, "install Docker")
	if r.failed != "" || !strings.Contains(r.skipped, "no /var/run/docker.sock") || !strings.Contains(r.skipped, "does not install") {
		t.Fatalf("skipped %q, failed %q: want a skip naming the cause", r.skipped, r.failed)
	}
	r = recorder{}
	testenv.Optional(&r, "x", func() error { return nil }, "")
	if r.skipped != "" || r.failed != "" {
		t.Fatalf("present dependency: skipped %q failed %q", r.skipped, r.failed)
	}
}
