package sshd

import (
	"net"
	"testing"
)

// Failures count against an IPv4 address, or an IPv6 /64 (one client can
// rotate through a whole /64), whatever the port.
func TestPasswordFailuresCountPerSource(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"192.0.2.1:1000", "192.0.2.1:2000"},
		{"[2001:db8:1:2::1]:22", "[2001:db8:1:2:ffff::9]:23"},
	} {
		a, _ := net.ResolveTCPAddr("tcp", tc.a)
		b, _ := net.ResolveTCPAddr("tcp", tc.b)
		if sourceOf(a) != sourceOf(b) {
			t.Errorf("%s and %s are different sources: %q, %q", tc.a, tc.b, sourceOf(a), sourceOf(b))
		}
	}
	a, _ := net.ResolveTCPAddr("tcp", "[2001:db8:1:2::1]:22")
	b, _ := net.ResolveTCPAddr("tcp", "[2001:db8:1:3::1]:22")
	if sourceOf(a) == sourceOf(b) {
		t.Errorf("two /64s are one source: %q", sourceOf(a))
	}
}
