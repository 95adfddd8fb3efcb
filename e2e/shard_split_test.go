package e2e_test

import (
	"cmp"
	"slices"
	"strings"
	"testing"
)

// Every test of the suite runs in exactly one shard, whatever the number
// of shards; the Kubernetes tests share one (their cluster is started per
// process); and the split is the same in every process.
func TestShardSplitCoversEveryTestOnce(t *testing.T) {
	t.Parallel()
	names, err := suiteTests(".")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names, "TestShardSplitCoversEveryTestOnce") || len(names) < 100 {
		t.Fatalf("suiteTests found %d tests, not this one's file or too few", len(names))
	}
	for n := 1; n <= 5; n++ {
		split := splitShards(names, n)
		if len(split) != len(names) {
			t.Fatalf("n=%d: %d of %d tests assigned", n, len(split), len(names))
		}
		k8s, used := 0, map[int]bool{}
		for _, name := range names {
			s := split[name]
			if s < 1 || s > n {
				t.Fatalf("n=%d: %s in shard %d", n, name, s)
			}
			used[s] = true
			if strings.HasPrefix(name, "TestKubernetes") {
				if k8s != 0 && s != k8s {
					t.Fatalf("n=%d: Kubernetes tests in shards %d and %d", n, k8s, s)
				}
				k8s = s
			}
		}
		if len(used) != n {
			t.Errorf("n=%d: only %d shards get tests", n, len(used))
		}
		if n == 3 {
			loads := make([]float64, n)
			for _, name := range names {
				loads[split[name]-1] += cmp.Or(shardWeights[name], defaultShardWeight)
			}
			t.Logf("3 shards' weights: %v seconds", loads)
		}
		again := splitShards(names, n)
		for name, s := range split {
			if again[name] != s {
				t.Fatalf("n=%d: %s in shard %d, then %d", n, name, s, again[name])
			}
		}
	}
}

// A shard spec is I/N with 1 ≤ I ≤ N; anything else is refused before a
// test runs rather than running all or none.
func TestShardSpec(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"1", "0/2", "3/2", "a/2", "1/0", "1/b", "-1/2"} {
		if _, _, err := parseShard(bad); err == nil {
			t.Errorf("parseShard(%q) accepted", bad)
		}
	}
	if i, n, err := parseShard("2/3"); err != nil || i != 2 || n != 3 {
		t.Errorf("parseShard(2/3) = %d, %d, %v", i, n, err)
	}
}

// SHOAL_E2E_PARALLEL is a number of tests, at least 1; anything else is
// refused before a test runs.
func TestParallelSetting(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"0", "-2", "two", "1.5"} {
		if _, err := parseParallel(bad); err == nil {
			t.Errorf("parseParallel(%q) accepted", bad)
		}
	}
	if n, err := parseParallel(""); err != nil || n != defaultParallel {
		t.Errorf("parseParallel(\"\") = %d, %v; want %d", n, err, defaultParallel)
	}
	if n, err := parseParallel("4"); err != nil || n != 4 {
		t.Errorf("parseParallel(4) = %d, %v", n, err)
	}
}
