//go:build !failpoint

package failpoint

// Check injects nothing outside the chaos suite's build (see
// failpoint_on.go).
func Check() error { return nil }

// RunAgain never asks for a write to run again outside the failpoint
// build (see failpoint_on.go).
func RunAgain() bool { return false }
