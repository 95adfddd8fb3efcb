package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/storage/objstore"
)

// A webhook's URL is where the server itself sends a POST, so it must not
// reach what only the server can: its own loopback listeners, the cloud
// metadata address (169.254.169.254, link-local) and the clouds' other
// metadata addresses, the unspecified address, and NAT64 forms of these
// (objstore.Forbidden). The same rule is applied twice: by CheckURL at create, on the
// URL and on what its host resolves to then, for a clear field error; and
// by Dialer at every connection, on the address actually dialled, so that
// a name that resolves elsewhere later (DNS rebinding) is still refused.
// The rule is objstore's (what a job's data fetch may reach), kept in one
// place. Private networks (10/8, 192.168/16...) are allowed: receivers
// of a self-hosted server often live there.

// MaxURLLength bounds a webhook's URL.
const MaxURLLength = 2048

// CheckURL checks a webhook URL's form and, unless allowPrivate, that its
// host is neither a refused address nor a name of the loopback
// (localhost). The scheme is http or https (whether http is allowed is
// the Service's config); no user or password in it (a credential in a
// URL is shown wherever the URL is). Errors name the field "url".
func CheckURL(u string, allowPrivate bool) error {
	if u == "" {
		return core.FieldErrorf("url", "is required (or give emails)")
	}
	if len(u) > MaxURLLength {
		return core.FieldErrorf("url", "is %d characters, more than %d", len(u), MaxURLLength)
	}
	p, err := url.Parse(u)
	if err != nil {
		return core.FieldErrorf("url", "%q is not a URL: %v", core.Short(u), unwrapURLError(err))
	}
	if p.Scheme != "https" && p.Scheme != "http" {
		return core.FieldErrorf("url", "%q must be an https:// URL", core.Short(u))
	}
	if p.User != nil {
		return core.FieldErrorf("url", "must not carry a user or password: the receiver checks the X-Shoal-Signature header instead")
	}
	if p.Opaque != "" || p.Host == "" || p.Hostname() == "" {
		return core.FieldErrorf("url", "%q has no host", core.Short(u))
	}
	if p.Fragment != "" {
		return core.FieldErrorf("url", "must not have a #fragment (it is never sent)")
	}
	if allowPrivate {
		return nil
	}
	return hostRefused(p.Hostname())
}

// hostRefused says why a URL's host is refused before any lookup: an
// address the rule refuses, a name of the loopback, or a number that is
// not a plain address (127.1, 0x7f000001: resolvers read those as the
// loopback).
func hostRefused(host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		return addrRefused(host, ip)
	}
	lower := strings.ToLower(strings.TrimSuffix(host, "."))
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		return core.FieldErrorf("url", "host %s names the loopback, where this server sends no webhook (a server's config may allow it: notifications.allow_private_webhook_urls)", host)
	}
	if numeric(lower) {
		return core.FieldErrorf("url", "host %s is a number but not a plain IP address; write the address in full (e.g. 203.0.113.7)", host)
	}
	return nil
}

// addrRefused refuses ip when the guard would refuse to dial it.
func addrRefused(host string, ip netip.Addr) error {
	if why := objstore.Forbidden(ip); why != "" {
		return core.FieldErrorf("url", "host %s is %s, where this server sends no webhook (a server's config may allow it: notifications.allow_private_webhook_urls)", host, why)
	}
	return nil
}

// numeric reports whether every dot-separated part of host is a decimal
// or 0x-hex number: a form some resolvers read as an IPv4 address.
func numeric(host string) bool {
	for _, part := range strings.Split(host, ".") {
		digits := strings.TrimPrefix(part, "0x")
		if digits == "" {
			return false
		}
		for _, r := range digits {
			if !(r >= '0' && r <= '9' || part != digits && (r >= 'a' && r <= 'f')) {
				return false
			}
		}
	}
	return true
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Resolver looks a host name up, as net.Resolver.LookupNetIP does.
type Resolver func(ctx context.Context, host string) ([]netip.Addr, error)

// defaultResolver is the system's.
func defaultResolver(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// checkResolved refuses a URL whose host resolves, now, to an address
// the rule refuses, or does not resolve at all (a webhook nobody can
// receive is a mistake better said at create).
func checkResolved(ctx context.Context, resolve Resolver, u string) error {
	p, err := url.Parse(u)
	if err != nil {
		return core.FieldErrorf("url", "%q is not a URL", core.Short(u))
	}
	host := p.Hostname()
	if _, err := netip.ParseAddr(host); err == nil {
		return nil // checked by CheckURL
	}
	ips, err := resolve(ctx, host)
	if err != nil || len(ips) == 0 {
		return core.FieldErrorf("url", "host %s does not resolve from this server: %v", host, err)
	}
	for _, ip := range ips {
		if err := addrRefused(fmt.Sprintf("%s (%s)", host, ip.Unmap()), ip); err != nil {
			return err
		}
	}
	return nil
}

// Dialer returns the dial function a webhook's sender connects through:
// unless allowPrivate, the address dialled is checked (after resolution)
// by the same rule as CheckURL, so that a name resolving to the loopback
// or the metadata address is refused at connect time.
func Dialer(allowPrivate bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if allowPrivate {
		return d.DialContext
	}
	return objstore.GuardDialer(d.DialContext, nil)
}

// NewHTTPClient returns a client for webhook POSTs: it dials through
// Dialer(allowPrivate), uses no proxy from the environment (a proxy
// would dial for it, past the guard), follows no redirect (a 3xx is
// answered as is: a receiver cannot send the POST elsewhere, the
// loopback included), and gives up a try after timeout.
func NewHTTPClient(allowPrivate bool, timeout time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           Dialer(allowPrivate),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
