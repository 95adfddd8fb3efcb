// Package tlsconf gives a server HTTPS without an operator's certificate:
// on first start it creates a private certificate authority and a server
// certificate it signs (ECDSA P-256), whose names cover the addresses
// clients and agents use; later starts reuse them, and re-issue the server
// certificate when a name is missing or it is about to expire. Clients
// and agents trust the CA's certificate (ca.pem), which the server writes
// into the client configuration it creates and hands to the nodes it
// starts.
package tlsconf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Files of a self-signed set-up, in its directory.
const (
	CAFile     = "ca.pem"
	caKeyFile  = "ca-key.pem"
	CertFile   = "server.pem"
	KeyFile    = "server-key.pem"
	certLife   = 825 * 24 * time.Hour
	caLife     = 10 * 365 * 24 * time.Hour
	renewAhead = 30 * 24 * time.Hour
)

// SelfSigned makes sure dir holds a CA and a server certificate for
// hosts (DNS names or IP addresses; localhost and 127.0.0.1 are always
// added) and returns the server certificate and the CA's certificate
// (PEM). now dates what it issues.
func SelfSigned(dir string, hosts []string, now time.Time) (tls.Certificate, []byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return tls.Certificate{}, nil, err
	}
	hosts = append([]string{"localhost", "127.0.0.1", "::1"}, hosts...)
	slices.Sort(hosts)
	hosts = slices.Compact(hosts)
	ca, caKey, caPEM, err := loadOrMakeCA(dir, now)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	if cert, err := tls.LoadX509KeyPair(filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile)); err == nil && covers(cert, hosts, ca, now) {
		return cert, caPEM, nil
	}
	cert, err := issue(dir, ca, caKey, hosts, now)
	return cert, caPEM, err
}

func loadOrMakeCA(dir string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, []byte, error) {
	caPEM, err1 := os.ReadFile(filepath.Join(dir, CAFile))
	keyPEM, err2 := os.ReadFile(filepath.Join(dir, caKeyFile))
	if err1 == nil && err2 == nil {
		pair, err := tls.X509KeyPair(caPEM, keyPEM)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("tls: %s: %w", filepath.Join(dir, CAFile), err)
		}
		ca, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			return nil, nil, nil, err
		}
		key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
		if !ok {
			return nil, nil, nil, errors.New("tls: the CA's key is not ECDSA")
		}
		return ca, key, caPEM, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "Shoal private CA", Organization: []string{"Shoal"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(caLife),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, BasicConstraintsValid: true, IsCA: true, MaxPathLenZero: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, err
	}
	ca, _ := x509.ParseCertificate(der)
	caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	kder, _ := x509.MarshalECPrivateKey(key)
	if err := os.WriteFile(filepath.Join(dir, caKeyFile), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return nil, nil, nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, CAFile), caPEM, 0o644); err != nil {
		return nil, nil, nil, err
	}
	return ca, key, caPEM, nil
}

// covers reports whether cert names every host, is the CA's and is not
// about to expire.
func covers(cert tls.Certificate, hosts []string, ca *x509.Certificate, now time.Time) bool {
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil || now.Add(renewAhead).After(leaf.NotAfter) || leaf.CheckSignatureFrom(ca) != nil {
		return false
	}
	for _, h := range hosts {
		if leaf.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

func issue(dir string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, hosts []string, now time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: hosts[0], Organization: []string{"Shoal"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(certLife),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	kder, _ := x509.MarshalECPrivateKey(key)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	if err := os.WriteFile(filepath.Join(dir, KeyFile), keyPEM, 0o600); err != nil {
		return tls.Certificate{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, CertFile), certPEM, 0o644); err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// Pool returns a certificate pool of the system's roots plus caPEM's
// certificates (none when caPEM is empty); an unreadable caPEM is an
// error.
func Pool(caPEM []byte) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if len(caPEM) > 0 && !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("tls: no certificate in the CA bundle")
	}
	return pool, nil
}
