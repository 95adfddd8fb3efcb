package objstore_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/internal/teststorage"
	"github.com/shoal-ml/shoal/storage/objstore"
)

// The guard refuses what a job may not reach, on the resolved address,
// before anything is dialled.
func TestGuardDialer(t *testing.T) {
	ip := teststorage.RequireHostIP(t)
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	var dialled []string
	next := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialled = append(dialled, addr)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	denied := net.JoinHostPort(ip, "6443")
	g := objstore.GuardDialer(next, []string{denied})
	for _, c := range []struct{ addr, why string }{
		{"127.0.0.1:" + port, "loopback"},
		{"127.1.2.3:80", "loopback"},
		{"[::1]:" + port, "loopback"},
		{"[::ffff:127.0.0.1]:80", "loopback"},
		{"169.254.169.254:80", "link-local"},
		{"[fe80::1]:80", "link-local"},
		{"0.0.0.0:" + port, "unspecified"},
		{"[::]:80", "unspecified"},
		{"224.0.0.1:80", "multicast"},
		{"localhost:" + port, "loopback"},
		{"db.localhost:" + port, "loopback"},
		{"LOCALHOST.:" + port, "loopback"},
		{denied, "Shoal's own"},
	} {
		_, err := g(context.Background(), "tcp", c.addr)
		if !errors.Is(err, objstore.ErrUnreachable) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v, want refused as %s", c.addr, err, c.why)
		}
	}
	if len(dialled) != 0 {
		t.Fatalf("dialled %v despite the refusals", dialled)
	}
	// A deny-listed endpoint named by a name that resolves to it.
	g2 := objstore.GuardDialer(next, []string{"127.0.0.1:" + port})
	if _, err := g2(context.Background(), "tcp", "127.0.0.1:"+port); err == nil {
		t.Fatal("deny-listed loopback dialled")
	}
	// The host's own routable address is reachable.
	c, err := g(context.Background(), "tcp", l.Addr().String())
	if err != nil {
		t.Fatalf("allowed address: %v", err)
	}
	c.Close()
	if len(dialled) != 1 || dialled[0] != l.Addr().String() {
		t.Fatalf("dialled %v", dialled)
	}
}

// A URL on an allowed host that redirects to the loopback or the
// metadata address is refused at the redirect's dial.
func TestHTTPRedirectToForbidden(t *testing.T) {
	ip := teststorage.RequireHostIP(t)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	innerSrv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("agent secret")) })}
	go innerSrv.Serve(inner)
	defer innerSrv.Close()
	for _, target := range []string{"http://" + inner.Addr().String() + "/token", "http://169.254.169.254/metadata/identity"} {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.RedirectHandler(target, http.StatusFound)}
		go srv.Serve(l)
		defer srv.Close()
		s, err := objstore.NewHTTP("http://"+l.Addr().String()+"/data.csv", true, objstore.GuardDialer((&net.Dialer{}).DialContext, nil))
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := s.Open(context.Background(), "data.csv")
		if err == nil {
			b, _ := io.ReadAll(r)
			t.Fatalf("redirect to %s followed: read %q", target, b)
		}
		if !errors.Is(err, objstore.ErrUnreachable) || !strings.Contains(err.Error(), "which jobs may not reach") {
			t.Fatalf("redirect to %s: %v, want refused by the guard", target, err)
		}
	}
}

// Addresses that reach a cloud's metadata service or the loopback
// although they are neither link-local nor loopback themselves: AWS's
// IPv6 metadata address (fd00:ec2::254, unique-local) and the NAT64
// well-known prefix carrying a refused IPv4 address (64:ff9b::/96, RFC
// 6052) — a NAT64 gateway hands those to the IPv4 address inside. A
// NAT64 address of a public IPv4 address and other unique-local ones
// stay allowed.
func TestForbiddenMetadataAndNAT64(t *testing.T) {
	for _, c := range []struct {
		addr, want string
	}{
		{"fd00:ec2::254", "metadata"},
		{"168.63.129.16", "metadata"},   // Azure's WireServer
		{"100.100.100.200", "metadata"}, // Alibaba Cloud's metadata
		{"::ffff:168.63.129.16", "metadata"},
		{"64:ff9b::a83f:8110", "metadata"},
		{"168.63.129.17", ""},
		{"64:ff9b::a9fe:a9fe", "link-local"},
		{"64:ff9b::169.254.169.254", "link-local"},
		{"64:ff9b::7f00:1", "loopback"},
		{"64:ff9b::", "unspecified"},
		{"::ffff:127.0.0.1", "loopback"},
		{"fe80::1%eth0", "link-local"},
		{"64:ff9b::cb00:7107", ""},
		{"fd00:ec2::253", ""},
		{"fd12:3456::1", ""},
	} {
		got := objstore.Forbidden(netip.MustParseAddr(c.addr))
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("Forbidden(%s) = %q, want %q", c.addr, got, c.want)
		}
	}
}
