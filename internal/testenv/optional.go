package testenv

// Optional skips the test when check fails, saying what is missing,
// even under RequireAll: for a dependency the test command deliberately
// does not install (Docker's daemon, where podman serves the same API),
// so a test of it runs only where someone provides it. Use Require for
// everything the test command installs.
func Optional(t T, what string, check func() error, hint string) {
	t.Helper()
	if err := check(); err != nil {
		t.Skipf("needs %s (%v), which the test command does not install: %s", what, err, hint)
	}
}
