package testctr

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Registry is a private registry from Debian's docker-registry, on
// 127.0.0.1 with a configuration of its own (the package's listens on
// every interface).
type Registry struct {
	// Addr is "127.0.0.1:<port>".
	Addr string
	// User and Password are its only credentials when it has auth.
	User, Password string
	cmd            *exec.Cmd
	done           chan struct{}
	log            string
}

// StartRegistry starts a registry storing under dir, with htpasswd auth
// when auth is true.
func StartRegistry(dir string, auth bool) (*Registry, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &Registry{Addr: fmt.Sprintf("127.0.0.1:%d", port), done: make(chan struct{}), log: filepath.Join(dir, "registry.log")}
	cfg := fmt.Sprintf("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: %s\n",
		filepath.Join(dir, "data"), r.Addr)
	if auth {
		r.User = "shoal"
		r.Password = randomHex(12)
		hash, err := bcrypt.GenerateFromPassword([]byte(r.Password), bcrypt.MinCost)
		if err != nil {
			return nil, err
		}
		htpasswd := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(htpasswd, []byte(r.User+":"+string(hash)+"\n"), 0o600); err != nil {
			return nil, err
		}
		cfg += fmt.Sprintf("auth:\n  htpasswd:\n    realm: shoal-test\n    path: %s\n", htpasswd)
	}
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	r.cmd = exec.Command("docker-registry", "serve", cfgPath)
	r.cmd.Stdout, r.cmd.Stderr = log, log
	// Killed with the test process, should it die before Main's clean-up.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start docker-registry: %w", err)
	}
	go func() { r.cmd.Wait(); close(r.done) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + r.Addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			return r, nil
		}
		select {
		case <-r.done:
			out, _ := os.ReadFile(log.Name())
			return nil, fmt.Errorf("docker-registry exited: %s", out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.Close()
			return nil, fmt.Errorf("docker-registry did not answer on %s: %v", r.Addr, err)
		}
	}
}

// Log is what the registry wrote so far: its access log (a line per
// request, "GET /v2/NAME/blobs/sha256:…" among them) and its warnings, by
// which a test counts the pulls of an image.
func (r *Registry) Log() string {
	b, _ := os.ReadFile(r.log)
	return string(b)
}

// Close stops the registry.
func (r *Registry) Close() {
	_ = r.cmd.Process.Kill()
	<-r.done
}

// freePort is a TCP port free on 127.0.0.1 now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
