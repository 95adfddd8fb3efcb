package objstore

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// GuardDialer wraps next so that it dials only addresses a job may reach:
// it refuses loopback, link-local (the metadata address 169.254.169.254
// among them), unspecified and multicast addresses, the clouds' other
// metadata addresses and NAT64 forms of all these (Forbidden), and every
// host:port in deny (the server's and the agent's own listeners). A name is
// resolved first and every address it resolves to is checked, then the
// checked address itself is dialled, so that a name cannot resolve to an
// allowed address at the check and a refused one at the dial (DNS
// rebinding). A refusal is ErrUnreachable.
func GuardDialer(next Dialer, deny []string) Dialer {
	denied := map[string]bool{}
	for _, d := range deny {
		denied[normalizeHostPort(d)] = true
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, errorf(ErrUnreachable, err, fmt.Sprintf("dial %s: %v", addr, err))
		}
		if denied[normalizeHostPort(addr)] {
			return nil, errorf(ErrUnreachable, nil, fmt.Sprintf("dial %s: refused: it is one of Shoal's own endpoints, which jobs may not reach", addr))
		}
		var ips []netip.Addr
		if ip, err := netip.ParseAddr(host); err == nil {
			ips = []netip.Addr{ip}
		} else {
			// localhost and its subdomains are the loopback by definition
			// (RFC 6761), whatever a resolver says.
			lower := strings.ToLower(strings.TrimSuffix(host, "."))
			if lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
				return nil, errorf(ErrUnreachable, nil, fmt.Sprintf("dial %s: refused: %s names the loopback", addr, host))
			}
			addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
			if err != nil {
				return nil, errorf(ErrUnreachable, err, fmt.Sprintf("dial %s: %v", addr, err))
			}
			ips = addrs
		}
		if len(ips) == 0 {
			return nil, errorf(ErrUnreachable, nil, fmt.Sprintf("dial %s: %s resolves to no address", addr, host))
		}
		for _, ip := range ips {
			if why := Forbidden(ip); why != "" {
				return nil, errorf(ErrUnreachable, nil, fmt.Sprintf("dial %s: refused: %s is %s, which jobs may not reach", addr, ip.Unmap(), why))
			}
			if denied[net.JoinHostPort(ip.Unmap().String(), port)] {
				return nil, errorf(ErrUnreachable, nil, fmt.Sprintf("dial %s: refused: %s is one of Shoal's own endpoints, which jobs may not reach", addr, net.JoinHostPort(ip.Unmap().String(), port)))
			}
		}
		var last error
		for _, ip := range ips {
			c, err := next(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
			if err == nil {
				return c, nil
			}
			last = err
		}
		return nil, last
	}
}

// nat64 is the NAT64 well-known prefix (RFC 6052), whose addresses
// carry an IPv4 address a gateway dials.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// metadata are clouds' metadata and host-agent addresses that no general
// rule catches (they are neither link-local nor loopback): a server or
// node on such a cloud reaches them, and they answer with its
// credentials or configuration.
var metadata = map[netip.Addr]string{
	netip.MustParseAddr("fd00:ec2::254"):   "AWS's IPv6 instance metadata",
	netip.MustParseAddr("168.63.129.16"):   "Azure's WireServer",
	netip.MustParseAddr("100.100.100.200"): "Alibaba Cloud's instance metadata",
}

// Forbidden says why a job may not reach ip ("a loopback address"), or ""
// when it may.
func Forbidden(ip netip.Addr) string {
	ip = ip.Unmap()
	if nat64.Contains(ip) {
		// A NAT64 gateway hands 64:ff9b::a.b.c.d to a.b.c.d: judge that.
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte(b[12:]))
	}
	switch {
	case metadata[ip] != "":
		return "a cloud metadata address (" + metadata[ip] + ")"
	case !ip.IsValid():
		return "not an address"
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address (the cloud metadata address among them)"
	case ip.IsUnspecified():
		return "the unspecified address"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	case ip.Is4() && ip.As4() == [4]byte{255, 255, 255, 255}:
		return "the broadcast address"
	}
	return ""
}

// normalizeHostPort writes host:port with an IP in its canonical form
// and a name in lower case, so deny entries match however they are
// spelled.
func normalizeHostPort(hp string) string {
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		return strings.ToLower(hp)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return net.JoinHostPort(ip.Unmap().String(), port)
	}
	return net.JoinHostPort(strings.ToLower(strings.TrimSuffix(host, ".")), port)
}
