package testk8s

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the test cluster's certificate authority and the files made from
// it, all in Go's crypto (no openssl): the CA, the apiserver's serving
// certificate, the client certificate it presents to the kubelet, and the
// service-account signing key.
type pki struct {
	dir                  string
	caCert, caKey        []byte // PEM
	ca                   *x509.Certificate
	key                  *ecdsa.PrivateKey
	CA, ServingCert      string // file paths
	ServingKey           string
	KubeletClientCert    string
	KubeletClientKey     string
	ServiceAccountKey    string
	ServiceAccountPublic string
}

// newPKI writes the cluster's certificates and keys under dir. The
// serving certificate names every address a client uses: 127.0.0.1,
// localhost and the kubernetes Service's IP, serviceIP.
func newPKI(dir string, serviceIP net.IP) (*pki, error) {
	p := &pki{dir: dir}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "shoal-testk8s-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	if p.ca, err = x509.ParseCertificate(der); err != nil {
		return nil, err
	}
	p.key = key
	p.caCert = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if p.CA, err = p.write("ca.crt", p.caCert); err != nil {
		return nil, err
	}
	if p.ServingCert, p.ServingKey, err = p.leaf("apiserver", "kube-apiserver", nil, x509.ExtKeyUsageServerAuth,
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		[]net.IP{net.IPv4(127, 0, 0, 1), serviceIP}); err != nil {
		return nil, err
	}
	if p.KubeletClientCert, p.KubeletClientKey, err = p.leaf("kubelet-client", "kube-apiserver-kubelet-client",
		[]string{"system:masters"}, x509.ExtKeyUsageClientAuth, nil, nil); err != nil {
		return nil, err
	}
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if p.ServiceAccountKey, err = p.writeKey("sa.key", sa); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return nil, err
	}
	if p.ServiceAccountPublic, err = p.write("sa.pub", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})); err != nil {
		return nil, err
	}
	return p, nil
}

// leaf writes a certificate signed by the CA, and its key, as name.crt
// and name.key.
func (p *pki) leaf(name, cn string, orgs []string, usage x509.ExtKeyUsage, dns []string, ips []net.IP) (cert, key string, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{usage}, DNSNames: dns, IPAddresses: ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &k.PublicKey, p.key)
	if err != nil {
		return "", "", err
	}
	if cert, err = p.write(name+".crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})); err != nil {
		return "", "", err
	}
	key, err = p.writeKey(name+".key", k)
	return cert, key, err
}

// writeKey writes k as PKCS #8 PEM.
func (p *pki) writeKey(name string, k *ecdsa.PrivateKey) (string, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return "", err
	}
	return p.write(name, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// write writes a file of the PKI, readable only by its owner.
func (p *pki) write(name string, data []byte) (string, error) {
	path := filepath.Join(p.dir, name)
	return path, os.WriteFile(path, data, 0o600)
}

// serial is a random certificate serial number.
func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

// randomToken is a bearer token: 16 random bytes, hex.
func randomToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
