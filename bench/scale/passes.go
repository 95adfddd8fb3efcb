package main

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// passTotals are the server's placement-pass histograms' sums and counts
// (shoal_placement_lock_wait_seconds, shoal_placement_pass_seconds) by
// pass kind, read from its /metrics.
type passTotals map[string]passTotal

// passTotal is one kind's count of passes and the seconds they waited
// for the placement lock and ran.
type passTotal struct {
	count       float64
	waited, ran float64
}

// readPasses scrapes the server's placement-pass totals.
func (s *server) readPasses() passTotals {
	st, b := s.get("/metrics")
	if st != 200 {
		fatalf("metrics: %d %s", st, b)
	}
	return parsePasses(b)
}

// parsePasses reads the histograms' _sum and _count lines from the
// Prometheus text format.
func parsePasses(b []byte) passTotals {
	out := passTotals{}
	eachMetric(b, func(name, labels string, v float64) {
		kind, ok := strings.CutPrefix(labels, `pass="`)
		if !ok {
			return
		}
		kind = strings.TrimSuffix(kind, `"`)
		t := out[kind]
		switch name {
		case "shoal_placement_pass_seconds_count":
			t.count = v
		case "shoal_placement_pass_seconds_sum":
			t.ran = v
		case "shoal_placement_lock_wait_seconds_sum":
			t.waited = v
		default:
			return
		}
		out[kind] = t
	})
	return out
}

// eachMetric calls fn with each sample of the Prometheus text format in
// b: its name, its labels as written between the braces ("" for none)
// and its value.
func eachMetric(b []byte, fn func(name, labels string, v float64)) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		var name, labels, value string
		if n, rest, ok := strings.Cut(line, "{"); ok {
			l, v, ok := strings.Cut(rest, "} ")
			if !ok {
				continue
			}
			name, labels, value = n, l, v
		} else if n, v, ok := strings.Cut(line, " "); ok {
			name, value = n, v
		} else {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		fn(name, labels, v)
	}
}

// passLine says, for each kind of pass between before and after, how
// many ran and their mean wait for the lock and mean run: what a new
// job's decision (the submitted passes) waited behind.
func passLine(before, after passTotals) string {
	var parts []string
	for _, kind := range []string{"submitted", "computes", "changes", "full", "whole_queue"} {
		a, b := after[kind], before[kind]
		n := a.count - b.count
		if n <= 0 {
			continue
		}
		mean := func(sec float64) time.Duration {
			return time.Duration(sec / n * float64(time.Second)).Round(100 * time.Microsecond)
		}
		parts = append(parts, fmt.Sprintf("%s %.0f, waited %s, ran %s", kind, n, mean(a.waited-b.waited), mean(a.ran-b.ran)))
	}
	if len(parts) == 0 {
		return "placement passes: none observed (a server without shoal_placement_pass_seconds)"
	}
	return "placement passes meanwhile (mean): " + strings.Join(parts, "; ")
}
