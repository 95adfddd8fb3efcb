//go:build !failpoint

package failpoint

// Check injects nothing outside the chaos suite's build (see
// failpoint_on.go).
func Check() error { return nil }
