//go:build !failpoint

package sqlstore

// failpoint injects nothing outside the chaos suite's build (see
// failpoint_on.go).
func failpoint() error { return nil }
