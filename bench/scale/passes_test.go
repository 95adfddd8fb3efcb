package main

import (
	"strings"
	"testing"
)

func TestPassLineFromMetrics(t *testing.T) {
	before := parsePasses([]byte(`# HELP shoal_placement_pass_seconds x
shoal_placement_pass_seconds_bucket{pass="submitted",le="0.001"} 0
shoal_placement_pass_seconds_sum{pass="submitted"} 1
shoal_placement_pass_seconds_count{pass="submitted"} 10
shoal_placement_lock_wait_seconds_sum{pass="submitted"} 2
`))
	after := parsePasses([]byte(`shoal_placement_pass_seconds_sum{pass="submitted"} 1.5
shoal_placement_pass_seconds_count{pass="submitted"} 20
shoal_placement_lock_wait_seconds_sum{pass="submitted"} 3
shoal_placement_pass_seconds_sum{pass="full"} 4
shoal_placement_pass_seconds_count{pass="full"} 2
shoal_placement_lock_wait_seconds_sum{pass="full"} 0
`))
	got := passLine(before, after)
	for _, want := range []string{"submitted 10, waited 100ms, ran 50ms", "full 2, waited 0s, ran 2s"} {
		if !strings.Contains(got, want) {
			t.Errorf("passLine = %q, want it to contain %q", got, want)
		}
	}
	if got := passLine(before, before); !strings.Contains(got, "none observed") {
		t.Errorf("no passes between: %q", got)
	}
}
