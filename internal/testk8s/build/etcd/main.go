// Command etcd is etcd's own server main, built at the version that
// Kubernetes pins, so that the test cluster's store speaks the same
// protocol as in production (Debian's etcd 3.4 lacks RequestWatchProgress).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
