package e2e_test

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ShardVar names the environment variable that runs one shard of the
// suite: "I/N" runs the I-th of N (1-based). scripts/test runs the shards
// as separate `go test` processes beside the other packages: the suite
// waits on servers, timers and processes far more than it computes, and
// one process runs its serial tests one after another; N processes run N
// of them at once.
const ShardVar = "SHOAL_E2E_SHARD"

// shardWeights are the tests' seconds in a full run, so that the shards
// come out even; a test missing here counts defaultShardWeight. From
// `go test -race -json -parallel 6 ./e2e` (the `pass` events' Elapsed) on
// 2026-11-30 under load average 30-48; a test that failed there (*) has
// its estimate if it had passed, not the time its failure took.
var shardWeights = map[string]float64{
	// Parallel tests that run for minutes (TestKubernetes: its subtests,
	// the former Kubernetes tests, summed).
	"TestInstanceContainerSeeds": 261,
	"TestInstanceContainers":     180,
	"TestInstancesInASubnet":     200, // *
	"TestKubernetes":             515, // *
	"TestContainerJobs":          157,
	// Parallel since 2026-12-01 (each leak check counts its own
	// server's containers).
	"TestDataEndToEnd":                   58,
	"TestPrepullImagesBeforeFirstJob":    40, // *
	"TestJobArtifactsAndDownloads":       28,
	"TestPipelineSweepAndComponentSteps": 24,
	"TestPipelineJobs":                   17,
	"TestDataInContainer":                12,
	"TestContainerJobRunsInItsImage":     12,
	"TestScaleWindowHoldsClusterAtZero":  6,
	// Serial tests (no t.Parallel): each shard runs its own one after
	// another before its parallel ones. The first uses the host's own
	// image store, the second checks that no container at all is left
	// and that its subnets' networks keep others' jobs out.
	"TestNodesShareTheHostsImages": 96,
	"TestContainerJobsInASubnet":   defaultShardWeight,
}

// defaultShardWeight is the weight of a test not in shardWeights.
const defaultShardWeight = 20

// shardGroups keep tests together in one shard where they share a
// process-wide set-up that costs more than it saves to start twice: the
// Kubernetes tests' cluster (testk8s.Shared, per test process).
var shardGroups = []*regexp.Regexp{regexp.MustCompile(`^TestKubernetes`)}

// testFunc finds the top-level tests in a test file.
var testFunc = regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)

// selectShard narrows the run to the shard spec names ("I/N"), by
// setting -test.skip to the tests of the other shards; "" selects all.
// Every shard process computes the same split from the package's sources
// (go test runs in the package's directory), so each test runs in exactly
// one shard.
func selectShard(spec string) error {
	if spec == "" {
		return nil
	}
	i, n, err := parseShard(spec)
	if err != nil {
		return err
	}
	if f := flag.Lookup("test.skip"); f != nil && f.Value.String() != "" {
		return fmt.Errorf("%s=%s and -skip cannot be combined", ShardVar, spec)
	}
	names, err := suiteTests(".")
	if err != nil {
		return err
	}
	var others []string
	for name, shard := range splitShards(names, n) {
		if shard != i {
			others = append(others, regexp.QuoteMeta(name))
		}
	}
	if len(others) == 0 {
		return nil
	}
	slices.Sort(others)
	return flag.Set("test.skip", "^("+strings.Join(others, "|")+")$")
}

// parseShard reads "I/N" with 1 ≤ I ≤ N.
func parseShard(spec string) (i, n int, err error) {
	a, b, ok := strings.Cut(spec, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("%s=%q: want I/N with 1 ≤ I ≤ N", ShardVar, spec)
	}
	return i, n, nil
}

// suiteTests lists the top-level tests declared in dir's test files.
func suiteTests(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range testFunc.FindAllSubmatch(b, -1) {
			names = append(names, string(m[1]))
		}
	}
	return names, nil
}

// splitShards assigns each test a shard in 1..n: the groups and the
// remaining tests, heaviest first, each to the lightest shard so far
// (ties to the lowest), a split that depends only on the names and the
// weights.
func splitShards(names []string, n int) map[string]int {
	type unit struct {
		names  []string
		weight float64
	}
	groups := make([]unit, len(shardGroups))
	var units []unit
	for _, name := range names {
		w := cmp.Or(shardWeights[name], defaultShardWeight)
		if g := slices.IndexFunc(shardGroups, func(re *regexp.Regexp) bool { return re.MatchString(name) }); g >= 0 {
			groups[g].names = append(groups[g].names, name)
			groups[g].weight += w
			continue
		}
		units = append(units, unit{[]string{name}, w})
	}
	for _, g := range groups {
		if len(g.names) > 0 {
			units = append(units, g)
		}
	}
	slices.SortStableFunc(units, func(a, b unit) int {
		if c := cmp.Compare(b.weight, a.weight); c != 0 {
			return c
		}
		return cmp.Compare(a.names[0], b.names[0])
	})
	load := make([]float64, n)
	shard := map[string]int{}
	for _, u := range units {
		least := 0
		for s := range load {
			if load[s] < load[least] {
				least = s
			}
		}
		load[least] += u.weight
		for _, name := range u.names {
			shard[name] = least + 1
		}
	}
	return shard
}
