package idle

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// The Debian Jupyter Notebook server and the kernel spec of
// python3-ipykernel. The Debian binary is used by path because the
// default python3 on PATH may be another one without Jupyter.
const (
	jupyterBinary = "/usr/bin/jupyter-notebook"
	ipykernelSpec = "/usr/share/jupyter/kernels/python3/kernel.json"
	jupyterBase   = "/some/prefix/"
)

// TestJupyterAgainstRealServer starts Jupyter Notebook, opens a kernel
// and a terminal through its API, and checks the client sees both with
// their last_activity, and that Evaluate takes the idle clock from them.
func TestJupyterAgainstRealServer(t *testing.T) {
	testenv.Files(t, "Debian's Jupyter Notebook", "apt-get install jupyter-notebook python3-ipykernel", jupyterBinary, ipykernelSpec)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url, token := startJupyter(t, ctx)
	before := time.Now().Add(-time.Second) // Jupyter's clock is ours, at its resolution

	var kernel Kernel
	post(t, ctx, url+"api/kernels", token, `{"name": "python3"}`, http.StatusCreated, &kernel)
	var term Terminal
	post(t, ctx, url+"api/terminals", token, "", http.StatusOK, &term)
	if kernel.ID == "" || term.Name == "" {
		t.Fatalf("Jupyter started kernel %+v and terminal %+v", kernel, term)
	}

	j := &Jupyter{BaseURL: url, Token: token, HTTP: &http.Client{Timeout: 10 * time.Second}}
	ks, err := j.Kernels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().Add(time.Second)
	if len(ks) != 1 {
		t.Fatalf("Kernels: %+v, want the one started", ks)
	}
	k := ks[0]
	if k.ID != kernel.ID || k.Name != "python3" || k.ExecutionState == "" || k.LastActivity.Before(before) || k.LastActivity.After(after) || k.LastActivity.Location() != time.UTC {
		t.Errorf("kernel %+v: want id %s, name python3, an execution_state and last_activity between %v and %v (UTC)", k, kernel.ID, before, after)
	}
	ts, err := j.Terminals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || ts[0].Name != term.Name || ts[0].LastActivity.Before(before) || ts[0].LastActivity.After(after) {
		t.Errorf("Terminals: %+v, want terminal %s with last_activity between %v and %v", ts, term.Name, before, after)
	}

	// The idle clock starts at the latest of them, a quiet kernel being
	// no activity by itself.
	latest := k.LastActivity
	if len(ts) == 1 && ts[0].LastActivity.After(latest) {
		latest = ts[0].LastActivity
	}
	_, d := Evaluate(policy30, Reset(State{}, before.Add(-time.Hour)), Signals{Kernels: ks, Terminals: ts}, after)
	if k.ExecutionState != "busy" && (!d.IdleSince.Equal(latest) || d.Active) {
		t.Errorf("Evaluate on the real listing: IdleSince %v Active %v, want %v", d.IdleSince, d.Active, latest)
	}

	// A wrong token is refused, a wrong base_url is not taken for a
	// server without terminals.
	bad := &Jupyter{BaseURL: url, Token: "wrong", HTTP: j.HTTP}
	if _, err := bad.Kernels(ctx); err == nil || !strings.Contains(err.Error(), "the token was refused") {
		t.Errorf("wrong token: %v", err)
	}
	noPrefix := &Jupyter{BaseURL: strings.TrimSuffix(url, jupyterBase) + "/", Token: token, HTTP: j.HTTP}
	if _, err := noPrefix.Kernels(ctx); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("base URL without the base_url: %v", err)
	}
}

// startJupyter runs Jupyter Notebook in its own process group, with its
// home and runtime files in temporary directories, waits until it
// answers, and stops it (kernels and terminals included) at the end of
// the test. It returns the server's URL (with the base_url) and token.
func startJupyter(t *testing.T, ctx context.Context) (url, token string) {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"home", "runtime", "config", "data", "notebooks", "ipython", "xdg-cache", "xdg-config", "xdg-data"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	token = hex.EncodeToString(b)
	port := freePort(t)

	args := []string{
		"--no-browser", "--ip=127.0.0.1", fmt.Sprintf("--port=%d", port),
		"--NotebookApp.port_retries=0", // fail rather than serve on another port
		"--NotebookApp.token=" + token,
		"--notebook-dir=" + filepath.Join(dir, "notebooks"),
		"--NotebookApp.base_url=" + jupyterBase,
	}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-root") // Jupyter refuses root otherwise
	}
	cmd := exec.Command(jupyterBinary, args...)
	// A clean environment: nothing of the caller's Python (pyenv,
	// PYTHONPATH) or Jupyter configuration leaks in, and the kernel and
	// terminal find Debian's python3 and a plain shell.
	cmd.Env = []string{
		"PATH=/usr/bin:/bin",
		"HOME=" + filepath.Join(dir, "home"),
		"SHELL=/bin/sh",
		"LANG=C.UTF-8",
		"JUPYTER_RUNTIME_DIR=" + filepath.Join(dir, "runtime"),
		"JUPYTER_CONFIG_DIR=" + filepath.Join(dir, "config"),
		"JUPYTER_DATA_DIR=" + filepath.Join(dir, "data"),
		"IPYTHONDIR=" + filepath.Join(dir, "ipython"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, "xdg-cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "xdg-config"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "xdg-data"),
		"XDG_RUNTIME_DIR=" + filepath.Join(dir, "runtime"),
	}
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", jupyterBinary, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		// SIGTERM first: Jupyter then shuts its kernels and terminals
		// down, which run in sessions of their own that a signal to our
		// process group would not reach. SIGKILL if it does not exit.
		pgid := cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				t.Errorf("Jupyter (pid %d) did not exit after SIGKILL", pgid)
			}
		}
		if t.Failed() {
			t.Logf("Jupyter's log:\n%s", log.String())
		}
	})

	url = fmt.Sprintf("http://127.0.0.1:%d%s", port, jupyterBase)
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"api/status", nil)
		req.Header.Set("Authorization", "token "+token)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url, token
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		select {
		case <-exited:
			t.Fatalf("Jupyter exited before answering (%v); its log:\n%s", err, log.String())
		case <-ctx.Done():
			t.Fatalf("Jupyter did not answer on %sapi/status: %v; its log:\n%s", url, err, log.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("Jupyter did not answer on %sapi/status within 60 s: %v; its log:\n%s", url, err, log.String())
		}
	}
}

// post calls Jupyter's API and decodes its answer into v.
func post(t *testing.T, ctx context.Context, url, token, body string, want int, v any) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("POST %s: %s: %s", url, resp.Status, buf.String())
	}
	if err := json.Unmarshal(buf.Bytes(), v); err != nil {
		t.Fatalf("POST %s: %v in %s", url, err, buf.String())
	}
}

// freePort returns a TCP port nobody listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// syncBuffer is a bytes.Buffer the process's output and the test may
// share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
