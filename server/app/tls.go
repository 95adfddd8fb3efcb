package app

import (
	"crypto/tls"
	"fmt"
	"github.com/shoal-ml/shoal/api/blobapi"
	"net"
	"net/url"
	"os"
	"path/filepath"

	"github.com/shoal-ml/shoal/internal/tlsconf"
)

// serveTLS wraps ln in TLS when the options ask for it, and returns the
// CA certificate clients and agents must trust (nil when the certificate
// is meant to chain to a system root). With --tls and no certificate, a
// private CA and a certificate for the listen and advertise addresses
// (and this machine's names and addresses when listening on all of them)
// are made in <data-dir>/tls. The certificate covers the listeners in
// also (the applications' origin), which serve with the same
// configuration (m.tlsConfig).
func (m *Main) serveTLS(ln net.Listener, advertise string, also ...net.Listener) (net.Listener, []byte, error) {
	o := m.opts
	if !o.TLS && o.TLSCert == "" && o.TLSKey == "" {
		return ln, nil, nil
	}
	var cert tls.Certificate
	var caPEM []byte
	var err error
	switch {
	case o.TLSCert != "" || o.TLSKey != "":
		if o.TLSCert == "" || o.TLSKey == "" {
			return nil, nil, fmt.Errorf("--tls-cert and --tls-key go together")
		}
		if cert, err = tls.LoadX509KeyPair(o.TLSCert, o.TLSKey); err != nil {
			return nil, nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		if o.TLSCA != "" {
			if caPEM, err = os.ReadFile(o.TLSCA); err != nil {
				return nil, nil, fmt.Errorf("--tls-ca: %w", err)
			}
		}
	default:
		hosts := listenHosts(ln)
		for _, l := range also {
			hosts = append(hosts, listenHosts(l)...)
		}
		if u, err := url.Parse(advertise); err == nil && u.Hostname() != "" {
			hosts = append(hosts, u.Hostname())
		}
		// The Blob endpoint under the name azure-ai-ml builds for
		// workspaceblobstore (api/blobapi), for clients that resolve it
		// to this server.
		hosts = append(hosts, blobapi.AzureHost)
		cert, caPEM, err = tlsconf.SelfSigned(filepath.Join(o.DataDir, "tls"), hosts, o.Clock.Now())
		if err != nil {
			return nil, nil, fmt.Errorf("tls: %w", err)
		}
	}
	m.scheme = "https"
	m.tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	return tls.NewListener(ln, m.tlsConfig), caPEM, nil
}

// listenHosts are the names the listener answers to: its address, or
// when it listens on all addresses, this machine's name and addresses.
func listenHosts(ln net.Listener) []string {
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return nil
	}
	if !addr.IP.IsUnspecified() {
		return []string{addr.IP.String()}
	}
	var hosts []string
	if h, err := os.Hostname(); err == nil {
		hosts = append(hosts, h)
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				hosts = append(hosts, n.IP.String())
			}
		}
	}
	return hosts
}
