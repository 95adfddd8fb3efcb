package agent

import (
	"os"
	"path/filepath"
	"sync"
)

// systemBundles are where Linux distributions keep their CA bundle.
var systemBundles = []string{"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"}

// caBundle returns the path of a CA bundle holding the system's roots and
// the server's private CA, written once into the work dir; "" when the
// server's certificate needs no CA of its own.
func (a *Agent) caBundle() string {
	if len(a.cfg.ServerCA) == 0 {
		return ""
	}
	a.bundleOnce.Do(func() {
		var pem []byte
		for _, p := range systemBundles {
			if b, err := os.ReadFile(p); err == nil {
				pem = append(b, '\n')
				break
			}
		}
		pem = append(pem, a.cfg.ServerCA...)
		path := filepath.Join(a.runDir, "ca-bundle.pem")
		// Public certificates, read by work that runs as other accounts:
		// 0644 whatever the umask the agent inherited (the server's, 077).
		err := os.WriteFile(path, pem, 0o644)
		if err == nil {
			err = os.Chmod(path, 0o644)
		}
		if err != nil {
			a.log.Warn("writing the CA bundle for jobs failed", "err", err)
			return
		}
		a.bundle = path
	})
	return a.bundle
}

// bundleState is the CA bundle written for jobs.
type bundleState struct {
	bundleOnce sync.Once
	bundle     string
}
