package tlsconf

import (
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"
)

// The CA is made once and kept; the server certificate names the hosts
// asked for (and localhost), is re-issued by the same CA when a host is
// added or it nears its end, and verifies against the CA.
func TestSelfSigned(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	cert, ca, err := SelfSigned(dir, []string{"ctl1.lab", "10.0.0.5"}, now)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(ca)
	caCert, err := x509.ParseCertificate(block.Bytes)
	if err != nil || !caCert.IsCA {
		t.Fatalf("ca: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	leaf, _ := x509.ParseCertificate(cert.Certificate[0])
	for _, h := range []string{"ctl1.lab", "10.0.0.5", "localhost", "127.0.0.1"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: h, Roots: pool, CurrentTime: now}); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	// Same hosts: the same certificate.
	again, ca2, err := SelfSigned(dir, []string{"10.0.0.5", "ctl1.lab"}, now)
	if err != nil || string(ca2) != string(ca) || string(again.Certificate[0]) != string(cert.Certificate[0]) {
		t.Fatalf("a second start changed the CA or the certificate (%v)", err)
	}
	// A new host: a new certificate from the same CA.
	more, ca3, err := SelfSigned(dir, []string{"ctl1.lab", "10.0.0.5", "shoal.lab"}, now)
	if err != nil || string(ca3) != string(ca) || string(more.Certificate[0]) == string(cert.Certificate[0]) {
		t.Fatalf("a new host: CA kept %v, certificate re-issued %v (%v)", string(ca3) == string(ca), string(more.Certificate[0]) != string(cert.Certificate[0]), err)
	}
	// Near its end: re-issued.
	late, _, err := SelfSigned(dir, []string{"ctl1.lab", "10.0.0.5", "shoal.lab"}, now.Add(certLife-time.Hour))
	if err != nil || string(late.Certificate[0]) == string(more.Certificate[0]) {
		t.Fatalf("a certificate near its end was not re-issued (%v)", err)
	}
	if _, err := Pool([]byte("not a certificate")); err == nil {
		t.Error("a bundle without a certificate was accepted")
	}
}
