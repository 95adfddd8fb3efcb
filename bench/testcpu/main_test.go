package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestParseStatTakesTheNameBetweenTheOuterParentheses(t *testing.T) {
	p, err := parseStat("4242 (a (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 12345 0 0")
	if err != nil {
		t.Fatal(err)
	}
	if p.pid != 4242 || p.ppid != 17 || p.comm != "a (b) c" || p.ticks != 300 {
		t.Fatalf("parsed %+v; want pid 4242, ppid 17, comm %q, 300 ticks", p, "a (b) c")
	}
	for _, bad := range []string{"", "12 no name", "12 (x) S 1 2"} {
		if _, err := parseStat(bad); err == nil {
			t.Errorf("parseStat(%q) gave no error", bad)
		}
	}
}

// A process is charged to its nearest *.test ancestor; CPU spent before
// the run, or under the name a process had before it exec'd, is not
// charged to its new name.
func TestSamplerChargesTheRunOnly(t *testing.T) {
	s := newSampler(100)
	s.sample(map[int]proc{
		1:  {pid: 1, comm: "init", ticks: 5000},
		10: {pid: 10, ppid: 1, comm: "e2e.test", ticks: 100},
	}, true)
	s.sample(map[int]proc{
		1:  {pid: 1, comm: "init", ticks: 5000},
		10: {pid: 10, ppid: 1, comm: "e2e.test", ticks: 300},
		11: {pid: 11, ppid: 10, comm: "sh", ticks: 50},
		12: {pid: 12, ppid: 11, comm: "podman", ticks: 400},
	}, false)
	s.sample(map[int]proc{
		10: {pid: 10, ppid: 1, comm: "e2e.test", ticks: 300},
		11: {pid: 11, ppid: 10, comm: "dpkg-query", ticks: 120}, // sh exec'd it
		13: {pid: 13, ppid: 1, comm: "orphan", ticks: 30},
	}, false)
	var out bytes.Buffer
	s.report(&out, 10*time.Second, 9.0, 10)
	got := out.String()
	for _, want := range []string{
		"      7.2      3  e2e.test\n", // 2 + 0.5 + 4 + 0.7; init's 50 s before the run are not counted
		"      0.3      1  other\n",
		"      4.0      1  e2e.test                 podman\n",
		"      0.7      1  e2e.test                 dpkg-query\n",
		"      0.5      1  e2e.test                 sh\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}
