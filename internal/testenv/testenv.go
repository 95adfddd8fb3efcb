// Package testenv is the one rule for tests that need something a plain
// developer machine may lack (root, PostgreSQL, Slurm, Chromium, Jupyter,
// OpenSSH, Azure's Python SDK): such a test checks through Require, which
// skips it saying what is missing and how to get it — so that a plain
// `go test ./...` as any user runs what it can — unless
// SHOAL_TEST_REQUIRE_ALL is set, as scripts/test sets it, when the same
// missing dependency fails the test: CI cannot pass by skipping.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RequireAllVar is the environment variable under which a missing
// dependency fails a test instead of skipping it (any value but "" and
// "0"). scripts/test sets it.
const RequireAllVar = "SHOAL_TEST_REQUIRE_ALL"

// ScriptsTest is the tail of every hint: the test command installs what
// is missing (as root) and runs everything.
const ScriptsTest = "or run scripts/test as root (it installs what the tests need)"

// T is what Require needs of a test: testing.TB has it, and so has a
// benchmark program's stand-in (internal/testhosts.Program), whose Skipf
// ends the program since a program cannot skip.
type T interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

var _ T = testing.TB(nil)

// RequireAll reports whether a missing dependency fails rather than
// skips: RequireAllVar is set.
func RequireAll() bool {
	v := os.Getenv(RequireAllVar)
	return v != "" && v != "0"
}

// Require runs check; when it returns an error, the test is skipped (or,
// under RequireAll, failed) with a message naming what it needs, why it
// is missing, and hint, how to get it ("apt-get install postgresql").
func Require(t T, what string, check func() error, hint string) {
	t.Helper()
	err := check()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("needs %s (%v): %s, %s", what, err, hint, ScriptsTest)
	if RequireAll() {
		t.Fatalf("%s [%s is set: a missing dependency fails]", msg, RequireAllVar)
		return
	}
	t.Skipf("%s [skipped; %s=1 makes this a failure]", msg, RequireAllVar)
}

// Root requires the test to run as root; why says what it does with it
// ("makes network namespaces").
func Root(t T, why string) {
	t.Helper()
	Require(t, "root: it "+why, func() error {
		if os.Geteuid() != 0 {
			return fmt.Errorf("running as uid %d", os.Geteuid())
		}
		return nil
	}, "run the tests as root (sudo go test)")
}

// Files requires every path to exist; what names the dependency and hint
// how to install it.
func Files(t T, what, hint string, paths ...string) {
	t.Helper()
	Require(t, what, func() error { return missingFiles(paths) }, hint)
}

// missingFiles says which of paths do not exist, nil when all do.
func missingFiles(paths []string) error {
	var errs []error
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			errs = append(errs, fmt.Errorf("no %s", p))
		}
	}
	return errors.Join(errs...)
}

// Command requires name on the PATH and returns its path.
func Command(t T, name, what, hint string) string {
	t.Helper()
	var path string
	Require(t, what, func() (err error) {
		path, err = exec.LookPath(name)
		if err != nil {
			return fmt.Errorf("%s not on the PATH", name)
		}
		return nil
	}, hint)
	return path
}

// Glob requires pattern to match a file and returns the matches, sorted.
func Glob(t T, pattern, what, hint string) []string {
	t.Helper()
	var matches []string
	Require(t, what, func() error {
		matches, _ = filepath.Glob(pattern)
		if len(matches) == 0 {
			return fmt.Errorf("no %s", pattern)
		}
		return nil
	}, hint)
	return matches
}

// MainShort is the -short rule for a whole package, called from TestMain
// after flag.Parse: under -short it says that the package's tests are
// skipped and why (they are slow: "they build and run the real binary")
// and returns skip true with the exit code, 0; under RequireAll, which
// must run everything, -short is a failure, code 1. Without -short it
// returns false.
func MainShort(why string) (code int, skip bool) {
	if !testing.Short() {
		return 0, false
	}
	if RequireAll() {
		fmt.Fprintf(os.Stderr, "-short skips every test here (%s), and %s is set: it must run everything\n", why, RequireAllVar)
		return 1, true
	}
	fmt.Printf("skipped under -short: %s; run without -short, or scripts/test, to run them\n", why)
	return 0, true
}
