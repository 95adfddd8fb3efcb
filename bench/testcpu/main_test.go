package main

import (
	"bytes"
	"os"
	"path/filepath"
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

// A pid used again by a new process of the same name (dpkg-query after
// dpkg-query) counts both processes' CPU, told apart by start time.
func TestSamplerCountsAReusedPidTwice(t *testing.T) {
	s := newSampler(100)
	s.sample(map[int]proc{10: {pid: 10, ppid: 1, comm: "x.test", ticks: 0, start: 1}}, true)
	s.sample(map[int]proc{
		10: {pid: 10, ppid: 1, comm: "x.test", ticks: 0, start: 1},
		20: {pid: 20, ppid: 10, comm: "dpkg-query", ticks: 40, start: 100},
	}, false)
	s.sample(map[int]proc{
		10: {pid: 10, ppid: 1, comm: "x.test", ticks: 0, start: 1},
		20: {pid: 20, ppid: 10, comm: "dpkg-query", ticks: 30, start: 200},
	}, false)
	var out bytes.Buffer
	s.report(&out, time.Second, 1, 10)
	if want := "      0.7      2  x.test                   dpkg-query\n"; !strings.Contains(out.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, out.String())
	}
}

// The kernel keeps 15 bytes of a command's name: a test binary whose
// name is longer is known by its command line's first word.
func TestReadProcsNamesTruncatedTestBinaries(t *testing.T) {
	root := t.TempDir()
	for pid, files := range map[string][2]string{
		"1234": {"1234 (parallelapi.tes) S 1 1 1 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 555 0 0", "/tmp/go-build1/b001/parallelapi.test\x00-test.v\x00"},
		"1235": {"1235 (kworker/u8:3-ev) I 2 0 0 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 9 0 0", ""},
	} {
		if err := os.MkdirAll(filepath.Join(root, pid), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, pid, "stat"), []byte(files[0]), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, pid, "cmdline"), []byte(files[1]), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := readProcs(root)
	if p := got[1234]; p.comm != "parallelapi.test" || p.ticks != 10 || p.start != 555 {
		t.Errorf("pid 1234: %+v; want parallelapi.test, 10 ticks, started at 555", p)
	}
	if p := got[1235]; p.comm != "kworker/u8:3-ev" {
		t.Errorf("pid 1235: %+v; want its name as the kernel gives it (no command line)", p)
	}
}
