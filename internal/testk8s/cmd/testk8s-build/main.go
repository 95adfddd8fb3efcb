// Command testk8s-build builds the test cluster's Kubernetes and etcd
// binaries into the cache (internal/testk8s), or finds them there, and
// prints their directory and how long building took. scripts/test runs
// it before the tests so that the cold build (minutes) is a step of its
// own rather than part of one test package's time limit.
package main

import (
	"fmt"
	"os"

	"github.com/shoal-ml/shoal/internal/testk8s"
)

func main() {
	dir, took, err := testk8s.Binaries()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testk8s-build:", err)
		os.Exit(1)
	}
	if took == 0 {
		fmt.Printf("Kubernetes %s test binaries cached in %s\n", testk8s.Version, dir)
		return
	}
	fmt.Printf("Kubernetes %s test binaries built in %s (%v)\n", testk8s.Version, dir, took.Round(1e9))
}
