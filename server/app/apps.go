package app

import (
	"fmt"
	"net"
	"net/url"
	"strconv"

	"github.com/shoal-ml/shoal/server/config"
)

// listenApps opens the listener of the applications' own origin: addr,
// or when "" the API listener's host with a port the system picks (a
// different port is a different origin to a browser).
func listenApps(addr, apiListen string) (net.Listener, error) {
	if addr == "" {
		host, _, err := net.SplitHostPort(apiListen)
		if err != nil {
			return nil, fmt.Errorf("listen %q: %w", apiListen, err)
		}
		addr = net.JoinHostPort(host, "0")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, listenError("--apps-listen", "apps_listen", addr, err)
	}
	return ln, nil
}

// appsURL is where browsers reach the applications' origin: the host
// browsers reach the server at (advertise_url's, else the listener's)
// with the applications' listener's port, unless apps_listen names a
// host of its own.
func (m *Main) appsURL(cfg *config.Config) string {
	port := ""
	appsHost := ""
	if a, ok := m.appsListener.Addr().(*net.TCPAddr); ok {
		port = strconv.Itoa(a.Port)
		if !a.IP.IsUnspecified() {
			appsHost = a.IP.String()
		}
	}
	host := appsHost
	if u, err := url.Parse(m.publicURL(cfg)); err == nil && u.Hostname() != "" {
		apiHost := ""
		if a, ok := m.listener.Addr().(*net.TCPAddr); ok && !a.IP.IsUnspecified() {
			apiHost = a.IP.String()
		}
		// Listening where the API does: browsers find it under the same
		// name as the API (which advertise_url may give).
		if appsHost == "" || appsHost == apiHost {
			host = u.Hostname()
		}
	}
	return m.scheme + "://" + net.JoinHostPort(host, port)
}

// AppsURL is the applications' origin (scheme://host:port).
func (m *Main) AppsURL() string { return m.appsOrigin }
