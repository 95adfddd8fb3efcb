package main

import (
	"testing"
	"time"
)

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

// A marker is ready only once date's whole line is there: an empty or
// cut file (the job still writing) is not read as a time.
func TestParseMarker(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1764483362123456789\n", 1764483362123456789, true},
		{"1764483362123456789", 0, false},
		{"", 0, false},
		{"\n", 0, false},
		{"17644833621234x\n", 0, false},
		{"-5\n", 0, false},
	} {
		got, ok := parseMarker([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseMarker(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// The percentiles are nearest-rank: p99 of 100 values is the 99th
// smallest, of fewer values the largest; the input is left unsorted.
func TestPercentile(t *testing.T) {
	v := make([]float64, 100)
	for i := range v {
		v[i] = float64(100 - i)
	}
	if got := percentile(v, 50); got != 50 {
		t.Errorf("p50 = %v, want 50", got)
	}
	if got := percentile(v, 99); got != 99 {
		t.Errorf("p99 = %v, want 99", got)
	}
	if v[0] != 100 {
		t.Errorf("the input was sorted in place")
	}
	if got := percentile([]float64{3, 1, 2}, 99); got != 3 {
		t.Errorf("p99 of 3 values = %v, want 3", got)
	}
	if got := percentile([]float64{3, 1, 2}, 50); got != 2 {
		t.Errorf("p50 of 3 values = %v, want 2", got)
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("p50 of none = %v, want 0", got)
	}
}

// The rate is jobs over the submissions' own wall time.
func TestRate(t *testing.T) {
	if got := rate(100, 2*time.Second); got != 50 {
		t.Errorf("rate = %v, want 50", got)
	}
	if got := rate(100, 0); got != 0 {
		t.Errorf("rate over no time = %v, want 0", got)
	}
}

// The job writes its start time to the marker on the warm cluster.
func TestJobYAML(t *testing.T) {
	got := jobYAML("/tmp/x/m3")
	want := "command: date +%s%N > /tmp/x/m3\ncompute: azureml:warm\n"
	if got != want {
		t.Errorf("jobYAML = %q, want %q", got, want)
	}
}

// --slurm-conf is repeatable: every line is kept, in order.
func TestLinesFlag(t *testing.T) {
	var l lines
	for _, v := range []string{"SchedulerParameters=batch_sched_delay=0", "MinJobAge=5"} {
		if err := l.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	if len(l) != 2 || l[0] != "SchedulerParameters=batch_sched_delay=0" || l[1] != "MinJobAge=5" {
		t.Errorf("lines = %q", l)
	}
}
