// Package teststorage starts real storage servers for tests, on private
// ports and temporary directories: Azurite (the Azure Storage emulator's
// Blob service, from the npm registry on Debian's nodejs), versitygw (an
// S3-compatible gateway over a POSIX directory, built through the Go
// module proxy) and a plain HTTP file server. scripts/test installs the
// first two into the cache directory (CacheDir); a test that finds them
// missing skips, or fails under SHOAL_TEST_REQUIRE_ALL.
//
// The servers listen on the host's first non-loopback IPv4 address, not
// 127.0.0.1: jobs run in network namespaces that cannot reach the host's
// loopback, and objstore.GuardDialer refuses loopback endpoints by
// design.
package teststorage

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// The pinned versions scripts/test installs; change them there too.
const (
	AzuriteVersion   = "3.35.0"
	VersitygwVersion = "v1.8.0"
)

// CacheDirVar names the directory the servers are installed in; by
// default shoal-teststorage under the system's temp dir.
const CacheDirVar = "SHOAL_TESTSTORAGE_CACHE"

// Azurite's well-known development account, public by design.
const (
	AzuriteAccount = "devstoreaccount1"
	AzuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// T is what the helpers need of a test.
type T interface {
	testenv.T
	Cleanup(func())
	TempDir() string
}

// CacheDir is where scripts/test installs the servers.
func CacheDir() string {
	if d := os.Getenv(CacheDirVar); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "shoal-teststorage")
}

// AzuriteBin is the installed azurite-blob program.
func AzuriteBin() string {
	return filepath.Join(CacheDir(), "azurite-"+AzuriteVersion, "node_modules", ".bin", "azurite-blob")
}

// VersitygwBin is the installed versitygw program.
func VersitygwBin() string {
	return filepath.Join(CacheDir(), "versitygw-"+VersitygwVersion, "versitygw")
}

// hint is how to install the servers.
const hint = "scripts/test installs them into " + "$" + CacheDirVar + " (npm install azurite@" + AzuriteVersion + "; go install github.com/versity/versitygw/cmd/versitygw@" + VersitygwVersion + ")"

var (
	hostOnce sync.Once
	hostIP   string
	hostErr  error
)

// HostIP is the host's first non-loopback IPv4 address on an interface
// that is up: what a job's network namespace reaches the host by.
func HostIP() (string, error) {
	hostOnce.Do(func() {
		ifs, err := net.Interfaces()
		if err != nil {
			hostErr = err
			return
		}
		for _, ifc := range ifs {
			if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
				continue
			}
			addrs, _ := ifc.Addrs()
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
					hostIP = n.IP.String()
					return
				}
			}
		}
		hostErr = errors.New("no non-loopback IPv4 address on any interface that is up")
	})
	return hostIP, hostErr
}

// RequireHostIP is HostIP, required: without such an address the test
// skips, and fails under SHOAL_TEST_REQUIRE_ALL (testenv.Require).
func RequireHostIP(t T) string {
	t.Helper()
	var ip string
	testenv.Require(t, "a non-loopback IPv4 address to serve storage on", func() (err error) {
		ip, err = HostIP()
		return err
	}, "bring up a network interface")
	return ip
}

// freePort is a port free on ip now.
func freePort(t T, ip string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs a server program until the test ends and waits until addr
// accepts connections; its output goes to a log file shown on failure.
func start(t T, name, logPath, addr string, cmd *exec.Cmd) {
	t.Helper()
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("%v", err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	// Dies with the test process, even when it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("%s exited before it listened on %s:\n%s", name, addr, tail(logPath))
		case <-ctx.Done():
			t.Fatalf("%s did not listen on %s within 60s:\n%s", name, addr, tail(logPath))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// tail is the last lines of a log.
func tail(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		lines = append(lines, s.Text())
		if len(lines) > 40 {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// Azurite is a running Azurite Blob service.
type Azurite struct {
	// ServiceURL is the Blob service URL with the account, path-style:
	// http://<host ip>:<port>/devstoreaccount1.
	ServiceURL string
	// Account and Key are the well-known development account's.
	Account, Key string
	// Addr is host:port.
	Addr string
}

// StartAzurite starts Azurite's Blob service for the test.
func StartAzurite(t T) *Azurite {
	t.Helper()
	bin := AzuriteBin()
	testenv.Files(t, "Azurite (the Azure Storage emulator)", hint, bin)
	testenv.Command(t, "node", "Debian's nodejs (runs Azurite)", "apt-get install nodejs")
	ip := RequireHostIP(t)
	port := freePort(t, ip)
	dir := t.TempDir()
	addr := net.JoinHostPort(ip, fmt.Sprint(port))
	cmd := exec.Command(bin, "--blobHost", ip, "--blobPort", fmt.Sprint(port),
		"--location", filepath.Join(dir, "data"), "--skipApiVersionCheck", "--loose", "--silent")
	start(t, "azurite-blob", filepath.Join(dir, "azurite.log"), addr, cmd)
	return &Azurite{ServiceURL: "http://" + addr + "/" + AzuriteAccount, Account: AzuriteAccount, Key: AzuriteKey, Addr: addr}
}

// S3 is a running S3-compatible server (versitygw over a directory).
type S3 struct {
	// EndpointURL is http://<host ip>:<port>.
	EndpointURL string
	// AccessKey and SecretKey are its root credentials.
	AccessKey, SecretKey string
	// Dir is the directory it serves: each bucket is a folder in it.
	Dir string
	// Addr is host:port.
	Addr string
}

// StartS3 starts versitygw for the test.
func StartS3(t T) *S3 {
	t.Helper()
	bin := VersitygwBin()
	testenv.Files(t, "versitygw (an S3-compatible server)", hint, bin)
	ip := RequireHostIP(t)
	port := freePort(t, ip)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatalf("%v", err)
	}
	s := &S3{AccessKey: "shoaltestaccess", SecretKey: "shoal-test-secret-" + fmt.Sprint(port), Dir: data}
	s.Addr = net.JoinHostPort(ip, fmt.Sprint(port))
	s.EndpointURL = "http://" + s.Addr
	cmd := exec.Command(bin, "--port", s.Addr, "posix", data)
	// Credentials through the environment, not the command line.
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+s.AccessKey, "ROOT_SECRET_KEY="+s.SecretKey)
	start(t, "versitygw", filepath.Join(dir, "versitygw.log"), s.Addr, cmd)
	return s
}

// Bucket makes an empty bucket (a folder the posix backend serves).
func (s *S3) Bucket(t T, name string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(s.Dir, name), 0o700); err != nil {
		t.Fatalf("bucket %s: %v", name, err)
	}
}

// HTTP is a running plain HTTP server of in-memory files.
type HTTP struct {
	// URL is http://<host ip>:<port>.
	URL   string
	mu    sync.Mutex
	files map[string][]byte
}

// StartHTTP serves files (path -> bytes, paths starting "/") over plain
// HTTP on the host's address until the test ends; Put adds more.
func StartHTTP(t T, files map[string][]byte) *HTTP {
	t.Helper()
	ip := RequireHostIP(t)
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatalf("%v", err)
	}
	h := &HTTP{URL: "http://" + l.Addr().String(), files: map[string][]byte{}}
	for k, v := range files {
		h.files[k] = v
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return h
}

// Put adds or replaces a file.
func (h *HTTP) Put(p string, b []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.files[p] = b
}

// ServeHTTP serves GET and HEAD of the files, 404 otherwise.
func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	b, ok := h.files[r.URL.Path]
	h.mu.Unlock()
	if !ok {
		http.Error(w, "no such file: "+r.URL.Path, http.StatusNotFound)
		return
	}
	w.Header().Set("ETag", fmt.Sprintf("\"%x\"", len(b)))
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	if r.Method == http.MethodHead {
		return
	}
	io.Copy(w, strings.NewReader(string(b)))
}
