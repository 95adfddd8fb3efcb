package testhosts

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
)

// lockSubnets takes the host-wide lock under which a pool claims its
// subnet; the returned function gives it back. The lock file lives in
// /run (root's, which New already requires) so every test process of the
// run sees the same one.
func lockSubnets(t T) func() {
	t.Helper()
	path := filepath.Join("/run", "shoal-testhosts.lock")
	// 0600: only root takes it; it holds nothing.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("subnet lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("subnet lock: %v", err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}

// freeSubnet is a 10.213.X subnet (X in 1..250) that no interface of
// this network namespace has an address in, starting the search at a
// place that differs per process and per pool so that a claim is rarely
// a long scan.
func freeSubnet(seq int) (string, error) {
	used := map[int]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", fmt.Errorf("listing addresses: %w", err)
	}
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		if ip4 := ipn.IP.To4(); ip4 != nil && ip4[0] == 10 && ip4[1] == 213 {
			used[int(ip4[2])] = true
		}
	}
	start := (os.Getpid() + seq*7) % 250
	for i := 0; i < 250; i++ {
		x := 1 + (start+i)%250
		if !used[x] {
			return fmt.Sprintf("10.213.%d", x), nil
		}
	}
	return "", fmt.Errorf("no free 10.213.X/24 subnet: 250 test pools are up on this host")
}
