package e2e_test

import (
	"flag"
	"fmt"
	"strconv"
)

// ParallelVar names the environment variable that sets how many of the
// suite's parallel tests run at once when `go test` is not given
// -parallel (which applies to every package of its run).
const ParallelVar = "SHOAL_E2E_PARALLEL"

// defaultParallel is how many tests run at once without -parallel or
// ParallelVar. The suite waits on servers, timers, processes and pods far
// more than it computes: alone on a quiet 2-core machine at Go's default
// (GOMAXPROCS, 2) the package kept 0.8 cores busy and took 847 s
// (2026-11-30, docs/internals/reliability.md "Issue 40 measurements:
// ci"); 6 at once on a machine loaded by others outran the waits of
// tests with 1 s leases there.
const defaultParallel = 3

// setParallel sets -test.parallel from spec ("" meaning defaultParallel)
// unless the command line gave -parallel, before the tests start
// (testing reads it when M.Run starts them).
func setParallel(spec string) error {
	n, err := parseParallel(spec)
	if err != nil {
		return err
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given {
		return nil
	}
	return flag.Set("test.parallel", strconv.Itoa(n))
}

// parseParallel reads ParallelVar's value: "" is defaultParallel.
func parseParallel(spec string) (int, error) {
	if spec == "" {
		return defaultParallel, nil
	}
	v, err := strconv.Atoi(spec)
	if err != nil || v < 1 {
		return 0, fmt.Errorf("%s=%q: must be a whole number of tests, at least 1", ParallelVar, spec)
	}
	return v, nil
}
