package main

import (
	"fmt"
	"sort"
	"strings"
)

// markedCommand is command preceded by its run marker (the PostgreSQL
// mode, where several servers could each place one attempt): every rank
// process of every attempt appends "run <attempt-id> <rank> <node>
// <unix-nanos> <pid>" (the last three for the reader) to the job's
// file "<name>.runs" in dir, a folder of the bench outside the servers'
// data dirs, before it does anything else. A job that ran twice — two
// processes for one attempt's rank, or a process of an attempt the
// servers never recorded — is then seen by what ran, not by what the
// servers say.
func markedCommand(dir, command string) string {
	return fmt.Sprintf(`echo "run $SHOAL_ATTEMPT_ID ${SHOAL_NODE_RANK:-0} $SHOAL_NODE_ID ${EPOCHREALTIME/./}000 $$" >>'%s'/"$SHOAL_JOB_NAME.runs"; %s`, dir, command)
}

// checkRuns reads a job's run markers and returns what is wrong: a rank
// of one attempt that ran more than once, a process run under an attempt
// the servers have no record of (attempts lists the IDs they have), and,
// when final names the attempt the servers say completed the job, that
// attempt never having run. A missing file is no runs at all.
func checkRuns(b []byte, attempts []string, final string) []string {
	known := map[string]bool{}
	for _, a := range attempts {
		known[a] = true
	}
	runs := map[string]int{}
	ran := map[string]bool{}
	var problems []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "run" {
			problems = append(problems, fmt.Sprintf("runs: unreadable line %q", line))
			continue
		}
		runs[f[1]+" rank "+f[2]]++
		ran[f[1]] = true
		if !known[f[1]] {
			problems = append(problems, fmt.Sprintf("a process ran under attempt %s, which the servers have no record of", f[1]))
		}
	}
	keys := make([]string, 0, len(runs))
	for k := range runs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if runs[k] > 1 {
			problems = append(problems, fmt.Sprintf("attempt %s ran %d times", k, runs[k]))
		}
	}
	if final != "" && !ran[final] {
		problems = append(problems, fmt.Sprintf("attempt %s completed the job on the servers but no process of it ran", final))
	}
	return problems
}

// checkAccounted compares the jobs the servers list with those the suite
// submitted: each exactly once, and none the suite never submitted. A
// submitted job missing from the list is lost, which the caller counts.
func checkAccounted(submitted, listed []string) []string {
	want := map[string]bool{}
	for _, n := range submitted {
		want[n] = true
	}
	seen := map[string]int{}
	for _, n := range listed {
		seen[n]++
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	var problems []string
	for _, n := range names {
		switch {
		case !want[n]:
			problems = append(problems, fmt.Sprintf("%s is listed, but was never submitted", n))
		case seen[n] > 1:
			problems = append(problems, fmt.Sprintf("%s is listed %d times", n, seen[n]))
		}
	}
	return problems
}
