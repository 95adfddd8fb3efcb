package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// totals are an arm's figures over its trials.
type totals struct {
	trials, jobs, faults, lost, dup, viol, leaderKills int
	byKind                                             map[string]int
	failover, recovery                                 []time.Duration
}

// sum adds up results.
func sum(results []trialResult) totals {
	t := totals{trials: len(results), byKind: map[string]int{}}
	for _, r := range results {
		for k, v := range r.faults {
			t.byKind[k] += v
			t.faults += v
		}
		t.jobs += r.jobs
		t.lost += r.lost
		t.dup += r.dup
		t.viol += len(r.violations)
		t.failover = append(t.failover, r.failover...)
		t.recovery = append(t.recovery, r.recovery...)
	}
	t.leaderKills = t.byKind[killLeader]
	return t
}

// p50max is the median and the maximum of ds, "-" when there are none.
func p50max(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("%s / %s", s[len(s)/2].Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}

// reportArms prints one row per binary (the PostgreSQL mode, or any run
// with --baseline-bin): the trials, jobs, faults, leader kills, what
// went wrong, and the failover and restart times.
func reportArms(arms []*arm) {
	fmt.Printf("| binary | trials | jobs | faults injected | leader kills | lost | duplicated | invariant violations | kill → another leads p50 / max | restart → serving p50 / max |\n")
	fmt.Printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, a := range arms {
		t := sum(a.results)
		var fs []string
		for _, k := range kindsOf(*store) {
			fs = append(fs, fmt.Sprintf("%s ×%d", k, t.byKind[k]))
		}
		fmt.Printf("| %s | %d | %d | %d (%s) | %d | %d | %d | %d | %s | %s |\n", a.label, t.trials, t.jobs, t.faults, strings.Join(fs, ", "),
			t.leaderKills, t.lost, t.dup, t.viol, p50max(t.failover), p50max(t.recovery))
	}
}
