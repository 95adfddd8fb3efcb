// Package ports picks listen addresses for servers a bench kills and
// restarts.
package ports

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
)

// Restartable returns a free loopback address whose port lies below the
// kernel's ephemeral range. A server restarted on a port inside that range
// can find it taken: while it is down, thousands of agents reconnecting to
// it are given ephemeral ports, and one connecting from the very port it
// dials connects to itself (TCP's simultaneous open) and holds the port.
// Shoal's own default, 7420, is outside the range; the benches need the
// same guarantee for the ports they pick.
func Restartable() string {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var lo, hi int
		if _, err := fmt.Sscan(string(b), &lo, &hi); err == nil && lo > 11000 {
			low = lo
		}
	}
	for range 1000 {
		port := 10000 + rand.IntN(low-10000)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			addr := l.Addr().String()
			l.Close()
			return addr
		}
	}
	panic("no free port below the ephemeral range")
}
