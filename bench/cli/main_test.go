package main

import "testing"

// inittrace's lines are summed by their clock field; other lines (the
// command's own output) are not.
func TestInitSum(t *testing.T) {
	trace := "init runtime @0.010 ms, 0.12 ms clock, 0 bytes, 0 allocs\n" +
		"init os @0.2 ms, 0.30 ms clock, 432 bytes, 6 allocs\n" +
		"{\"shoal\": \"dev\"}\n"
	sum, n := initSum([]byte(trace))
	if n != 2 || sum < 0.419 || sum > 0.421 {
		t.Errorf("sum %v over %d lines, want 0.42 over 2", sum, n)
	}
}
