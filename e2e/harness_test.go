// Package e2e_test runs the real `shoal` binary end to end: a server as a
// child process on a free port with a temporary HOME and data directory, and
// the CLI as separate processes that find the server through the client
// config the server wrote (~/.config/shoal/config.yaml).
package e2e_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testctr"
	"github.com/shoal-ml/shoal/internal/testenv"
	"github.com/shoal-ml/shoal/internal/testk8s"
)

// shoalBin is the binary TestMain built.
var shoalBin string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	flag.Parse()
	if err := selectShard(os.Getenv(ShardVar)); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 2
	}
	if err := setParallel(os.Getenv(ParallelVar)); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 2
	}
	if code, skip := testenv.MainShort("the end-to-end tests build the shoal binary and run servers, agents and jobs for minutes"); skip {
		return code
	}
	dir, err := os.MkdirTemp("", "shoal-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	shoalBin = filepath.Join(dir, "shoal")
	if prebuilt := os.Getenv("SHOAL_E2E_BIN"); prebuilt != "" {
		// A machine without Go (scripts/gpu-check --prebuilt on a GPU
		// host) runs the suite against a binary built elsewhere.
		// The full binary (shoal-server) is expected beside it, as
		// installed: `shoal server` and `shoal agent` exec it.
		for from, to := range map[string]string{prebuilt: shoalBin,
			filepath.Join(filepath.Dir(prebuilt), "shoal-server"): filepath.Join(dir, "shoal-server")} {
			if err := copyFile(from, to); err != nil {
				fmt.Fprintln(os.Stderr, "e2e: SHOAL_E2E_BIN (and shoal-server beside it):", err)
				return 1
			}
		}
	} else {
		root, err := moduleRoot()
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e: cannot find the module root:", err)
			return 1
		}
		// The CLI (shoal) and the full binary beside it (shoal-server),
		// as installed: `shoal server` and `shoal agent` exec the latter.
		build := exec.Command("go", "build", "-o", filepath.Dir(shoalBin)+"/", "./cmd/shoal", "./cmd/shoal-server")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/shoal ./cmd/shoal-server failed: %v\n%s", err, out)
			return 1
		}
	}
	// testctr.Main stops the shared container set-up (registries, podman
	// service) of the container tests after the run.
	code := testctr.Main(m)
	// The kubernetes tests' cluster (started by the first of them).
	testk8s.StopShared()
	// Agents and the jobs they run outlive the server by design; every
	// test's cleanup kills them. Anything still there is a leak: report it
	// (and kill it) so that the suite fails.
	if left := killSuiteProcesses(append([]string{shoalBin, filepath.Join(dir, "shoal-server")}, suiteDirs()...)); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: %d process(es) of the suite were still running after the tests (now killed):\n", len(left))
		for _, p := range left {
			fmt.Fprintf(os.Stderr, "  %s\n", p)
		}
		if code == 0 {
			code = 1
		}
	}
	return code
}

// copyFile copies an executable.
func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

// moduleRoot returns the directory of go.mod: `go env GOMOD`, else "..".
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if gomod := strings.TrimSpace(string(out)); err == nil && gomod != "" && gomod != os.DevNull {
		return filepath.Dir(gomod), nil
	}
	abs, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(abs, "go.mod")); err != nil {
		return "", err
	}
	return abs, nil
}

// serverOpts configure startServer.
type serverOpts struct {
	// Config is the server config file's YAML; "" starts without --config.
	Config string
	// Host is the address to listen on; default 127.0.0.1. Tests whose
	// nodes run in network namespaces listen on their bridge's address.
	Host string
	// Addr, when set, is the host:port to listen on (a front URL names it
	// before the server starts).
	Addr string
	// Args are more `shoal server` flags (--tls ...); TLS says the server
	// then serves HTTPS.
	Args []string
	TLS  bool
	// Env are more environment variables (KEY=value) of the server and of
	// every CLI call.
	Env []string
}

// server is a `shoal server` child process.
type server struct {
	args    []string // more `shoal server` flags
	t       *testing.T
	dir     string // the test's temporary directory
	home    string // HOME of the server and of every CLI call
	dataDir string
	// nodesDir holds the local provider's nodes (--nodes-dir): outside the
	// data dir, in a folder the accounts work runs as can enter.
	nodesDir string
	addr     string // 127.0.0.1:PORT
	url      string
	config   string // path of the config file, "" when none
	logPath  string
	env      []string // environment of the server and the CLI

	cmd     *exec.Cmd
	logFile *os.File
	done    chan struct{} // closed when the process has exited
	waitErr error
}

// emulatedGPUConfig declares emulated GPUs for the default location.
const emulatedGPUConfig = "locations:\n  - name: local\n    emulated_gpus: true\n"

// startServer starts a server with a fresh HOME and data directory on a
// free port and waits until /healthz answers. Cleanup stops it (SIGTERM,
// then SIGKILL) and shows its log when the test failed.
func startServer(t *testing.T, opts serverOpts) *server {
	t.Helper()
	dir := t.TempDir()
	s := &server{t: t, dir: dir, home: filepath.Join(dir, "home"), dataDir: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "server.log")}
	if err := os.MkdirAll(s.home, 0o700); err != nil {
		t.Fatal(err)
	}
	s.nodesDir = reachableDir(t, "shoal-e2e-nodes-")
	if opts.Config != "" {
		s.config = filepath.Join(dir, "server.yml")
		if err := os.WriteFile(s.config, []byte(opts.Config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s.env = append(childEnv(s.home), opts.Env...)
	s.args = opts.Args
	registerSuiteDir(dir + string(filepath.Separator))
	registerSuiteDir(s.nodesDir + string(filepath.Separator))
	t.Cleanup(s.cleanup)
	// Another process may take the free port between the probe and the
	// server's bind; try a few ports.
	for attempt := 1; ; attempt++ {
		s.addr = freeAddrOn(t, cmp.Or(opts.Host, "127.0.0.1"))
		if opts.Addr != "" {
			s.addr = opts.Addr
		}
		s.url = "http://" + s.addr
		if opts.TLS {
			s.url = "https://" + s.addr
		}
		err := s.start()
		if err == nil {
			return s
		}
		if attempt == 3 || opts.Addr != "" || !strings.Contains(s.log(), "address already in use") {
			t.Fatalf("server did not start: %v\n%s", err, s.logTail())
		}
	}
}

// childEnv is this process's environment with HOME replaced and every
// variable that could point the server or CLI elsewhere removed.
func childEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "SHOAL_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home)
}

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr(t *testing.T) string { t.Helper(); return freeAddrOn(t, "127.0.0.1") }

// freeAddrOn returns a free host:port on host.
func freeAddrOn(t *testing.T, host string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// start runs the server process and waits for /healthz.
func (s *server) start() error {
	args := append([]string{"server", "--listen", s.addr, "--data-dir", s.dataDir, "--nodes-dir", s.nodesDir}, s.args...)
	if s.config != "" {
		args = append(args, "--config", s.config)
	}
	f, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "=== %s shoal %s\n", time.Now().Format(time.RFC3339Nano), strings.Join(args, " "))
	cmd := exec.Command(shoalBin, args...)
	cmd.Env = s.env
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	s.cmd, s.logFile, s.done, s.waitErr = cmd, f, make(chan struct{}), nil
	go func(done chan struct{}) {
		err := cmd.Wait()
		s.waitErr = err
		f.Close()
		close(done)
	}(s.done)
	return s.waitHealthy(15 * time.Second)
}

// waitHealthy polls /healthz until it answers 200.
func (s *server) waitHealthy(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	// Up is all this asks: whether HTTPS verifies is the TLS tests' matter.
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for {
		select {
		case <-s.done:
			return fmt.Errorf("the server exited before it was healthy: %v", s.waitErr)
		default:
		}
		resp, err := hc.Get(s.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			s.signal(syscall.SIGKILL)
			<-s.done
			return fmt.Errorf("/healthz did not answer 200 within %s (last error: %v)", timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *server) running() bool {
	if s.done == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

func (s *server) signal(sig os.Signal) {
	if s.running() {
		_ = s.cmd.Process.Signal(sig)
	}
}

// stop sends SIGTERM and asserts a clean exit (code 0) within 15 s.
func (s *server) stop() {
	s.t.Helper()
	if !s.running() {
		s.t.Fatal("stop: the server is not running")
	}
	s.signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		s.signal(syscall.SIGKILL)
		<-s.done
		s.t.Fatalf("the server did not exit within 15 s of SIGTERM\n%s", s.logTail())
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		s.t.Fatalf("the server exited with code %d after SIGTERM (%v), want 0\n%s", code, s.waitErr, s.logTail())
	}
}

// kill9 kills the server with SIGKILL: no shutdown code runs.
func (s *server) kill9() {
	s.t.Helper()
	if !s.running() {
		s.t.Fatal("kill9: the server is not running")
	}
	s.signal(syscall.SIGKILL)
	<-s.done
}

// restart starts the server again on the same port and data directory
// (stopping it first with SIGTERM if it still runs).
func (s *server) restart() {
	s.t.Helper()
	if s.running() {
		s.stop()
	}
	if err := s.start(); err != nil {
		s.t.Fatalf("restart: %v\n%s", err, s.logTail())
	}
}

func (s *server) cleanup() {
	if s.running() {
		s.signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			s.signal(syscall.SIGKILL)
			<-s.done
		}
	}
	// Agents (and their jobs) run in their own process groups and outlive
	// the server on purpose: kill what this test's server left behind.
	if left := killSuiteProcesses([]string{s.dir + string(filepath.Separator), s.nodesDir + string(filepath.Separator)}); len(left) > 0 && testing.Verbose() {
		s.t.Logf("killed %d process(es) left by the server's nodes:\n  %s", len(left), strings.Join(left, "\n  "))
	}
	if s.t.Failed() {
		s.t.Logf("server log (%s):\n%s", s.logPath, s.logTail())
		// The agents' side of a failure (an SSH session, a job's start)
		// is only in their own logs, which t.TempDir's cleanup removes.
		logs, _ := filepath.Glob(filepath.Join(s.nodesDir, "*", "agent.log"))
		for _, path := range logs {
			s.t.Logf("agent log (%s):\n%s", path, tailLines(path, 60))
		}
		// An instance's applications (Jupyter, custom ones) log in an
		// app-logs folder of their instance's: a proxied request's 502
		// is explained there.
		var appLogs []string
		_ = filepath.WalkDir(s.nodesDir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Base(filepath.Dir(path)) == "app-logs" {
				if appLogs = append(appLogs, path); len(appLogs) == 8 {
					return fs.SkipAll
				}
			}
			return nil
		})
		for _, path := range appLogs {
			s.t.Logf("application log (%s):\n%s", path, tailLines(path, 40))
		}
	}
}

// tailLines returns the last n lines of the file at path.
func tailLines(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func (s *server) log() string {
	b, _ := os.ReadFile(s.logPath)
	return string(b)
}

// logTail returns the last 200 lines of the server log.
func (s *server) logTail() string {
	lines := strings.Split(s.log(), "\n")
	if len(lines) > 200 {
		lines = lines[len(lines)-200:]
	}
	return strings.Join(lines, "\n")
}

// adminToken reads the token the server wrote on its first start.
func (s *server) adminToken(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dataDir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// run runs the CLI with env (a server's env: its HOME) and returns its
// output and exit code. Stdin is empty.
func run(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runStdin(t, env, "", args...)
}

// runStdin is run with the given standard input.
func runStdin(t *testing.T, env []string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, shoalBin, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ctx.Err() == nil:
		code = ee.ExitCode()
	default:
		t.Fatalf("shoal %s: %v (stderr: %s)", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), errb.String(), code
}

// runJSON runs the CLI, requires exit code 0 and decodes stdout as JSON.
func runJSON[T any](t *testing.T, env []string, args ...string) T {
	t.Helper()
	var v T
	stdout, stderr, code := run(t, env, args...)
	if code != 0 {
		t.Fatalf("shoal %s: exit code %d\nstderr: %s", strings.Join(args, " "), code, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("shoal %s: stdout is not the JSON expected (%v):\n%s", strings.Join(args, " "), err, stdout)
	}
	return v
}

// mustRun runs the CLI and requires exit code 0; it returns stdout.
func mustRun(t *testing.T, env []string, args ...string) string {
	t.Helper()
	stdout, stderr, code := run(t, env, args...)
	if code != 0 {
		t.Fatalf("shoal %s: exit code %d\nstderr: %s", strings.Join(args, " "), code, stderr)
	}
	return stdout
}

// mustFail runs the CLI and requires a non-zero exit code; it returns
// stderr and the code.
func mustFail(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	stdout, stderr, code := run(t, env, args...)
	if code == 0 {
		t.Fatalf("shoal %s: exit code 0, want a failure\nstdout: %s", strings.Join(args, " "), stdout)
	}
	return stderr, code
}

// httpDo sends a request to the server; token "" sends no Authorization
// header. It returns the status, headers and body.
func (s *server) httpDo(t *testing.T, method, path, token string, body []byte, headers map[string]string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, data
}

// seedFile returns the path of a testdata seed file.
func seedFile(t *testing.T, name string) string { t.Helper(); return testdataFile(t, "seeds", name) }

// writeVariant writes a copy of a seed file with each old string replaced
// by its new one, and returns its path.
func writeVariant(t *testing.T, seed string, replacements ...string) string {
	t.Helper()
	return testdataVariant(t, "seeds", seed, replacements...)
}

// testdataFile returns the absolute path of testdata/<dir>/<name>, which
// must exist.
func testdataFile(t *testing.T, dir, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// testdataVariant writes a copy of testdata/<dir>/<name> with each old
// string replaced by its new one (each must occur), and returns its path.
func testdataVariant(t *testing.T, dir, name string, replacements ...string) string {
	t.Helper()
	b, err := os.ReadFile(testdataFile(t, dir, name))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for i := 0; i+1 < len(replacements); i += 2 {
		if !strings.Contains(text, replacements[i]) {
			t.Fatalf("%s does not contain %q", name, replacements[i])
		}
		text = strings.ReplaceAll(text, replacements[i], replacements[i+1])
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// jsonInt reads a JSON number decoded into any as an int (-1 when absent).
func jsonInt(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case json.Number:
		i, _ := strconv.Atoi(string(n))
		return i
	}
	return -1
}

// jsonStr reads a JSON string decoded into any ("" when absent).
func jsonStr(v any) string {
	s, _ := v.(string)
	return s
}

// decodeJSON decodes text as JSON into a T or fails the test.
func decodeJSON[T any](t *testing.T, text string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("not the JSON expected (%v):\n%s", err, text)
	}
	return v
}

// reachableDir makes a folder for a test whose parents every account may
// enter (t.TempDir's may not: it is 0700), mode 0711, removed after the
// test: a server running as root runs work as other accounts there.
func reachableDir(t *testing.T, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// sharedDir makes a folder any account may write (mode 01777, as /tmp),
// for a test whose jobs, which run as accounts of their own, leave a
// record there.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := reachableDir(t, "shoal-e2e-shared-")
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// createWorkspaces creates the workspaces the examples write to: a write
// no longer creates its workspace.
func createWorkspaces(t *testing.T, env []string, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, stderr, code := run(t, env, "workspace", "create", "-n", n, "-o", "none"); code != 0 && !strings.Contains(stderr, "already exists") {
			t.Fatalf("workspace create %s: %s", n, stderr)
		}
	}
}

// seedWorkspaces are the workspaces the seed examples name.
func seedWorkspaces() []string {
	var out []string
	for _, ex := range seedExamples {
		if ex.Workspace != "" && !slices.Contains(out, ex.Workspace) {
			out = append(out, ex.Workspace)
		}
	}
	return out
}
