package teststorage_test

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/internal/teststorage"
)

// The servers listen on an address a job's network namespace reaches:
// never the loopback.
func TestServersAvoidLoopback(t *testing.T) {
	ip := teststorage.RequireHostIP(t)
	if a := netip.MustParseAddr(ip); a.IsLoopback() || a.IsLinkLocalUnicast() || !a.Is4() {
		t.Fatalf("HostIP %s", ip)
	}
	h := teststorage.StartHTTP(t, map[string][]byte{"/x": []byte("y")})
	if !strings.HasPrefix(h.URL, "http://"+net.JoinHostPort(ip, "")) {
		t.Fatalf("URL %s not on %s", h.URL, ip)
	}
	resp, err := http.Get(h.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "y" {
		t.Fatalf("got %q", b)
	}
	az := teststorage.StartAzurite(t)
	s3 := teststorage.StartS3(t)
	for _, addr := range []string{az.Addr, s3.Addr} {
		if host, _, _ := net.SplitHostPort(addr); host != ip {
			t.Errorf("%s not on %s", addr, ip)
		}
	}
}
