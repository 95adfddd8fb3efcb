package apps_test

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/apps"
	"github.com/shoal-ml/shoal/internal/testenv"
)

func TestJupyterAppCommand(t *testing.T) {
	app := apps.JupyterApp("/usr/bin/jupyter-notebook", 8899, "api/v1/x/applications/jupyter", "tok", "/home/u")
	for _, want := range []string{"--port=8899", "--ip=127.0.0.1", "--port-retries=0", "--NotebookApp.password=",
		"--NotebookApp.base_url=/api/v1/x/applications/jupyter/", "--NotebookApp.notebook_dir=/home/u"} {
		if !slices.Contains(app.Command, want) {
			t.Errorf("command %q lacks %q", app.Command, want)
		}
	}
	for _, arg := range app.Command {
		// Every user of the host can read a process's arguments.
		if strings.Contains(arg, "tok") {
			t.Errorf("command %q carries the token: %s", app.Command, arg)
		}
		if strings.Contains(arg, "disable_check_xsrf") || strings.Contains(arg, "allow_origin") {
			t.Errorf("command %q turns off a cross-site check: %s", app.Command, arg)
		}
	}
	if app.Name != "jupyter" || app.Port != 8899 || app.HealthPath != "/api/v1/x/applications/jupyter/api/status" || app.HealthHeader != "Authorization: token tok" {
		t.Errorf("app %+v", app)
	}
	for _, want := range []string{"JUPYTER_TOKEN=tok", "HOME=/home/u", "JUPYTER_DATA_DIR=/home/u/.local/share/jupyter", "JUPYTER_CONFIG_DIR=/home/u/.jupyter"} {
		if !slices.Contains(app.Env, want) {
			t.Errorf("env %q lacks %q", app.Env, want)
		}
	}
	if app := apps.JupyterApp("/opt/venv/bin/jupyter", 0, "", "t", "/h"); app.Command[1] != "notebook" || app.Port == 0 || app.HealthPath != "/api/status" {
		t.Errorf("jupyter, port 0, no base: %+v", app)
	}
}

// The built-in notebook: the real Jupyter Notebook server from Debian,
// behind the base URL of the server's proxy, with the token the proxy
// sends.
func TestJupyter(t *testing.T) {
	var bin string
	testenv.Require(t, "Jupyter Notebook", func() error {
		var ok bool
		if bin, ok = apps.FindJupyter(); !ok {
			return errors.New("no /usr/bin/jupyter-notebook nor jupyter-notebook on the PATH")
		}
		return nil
	}, "apt-get install jupyter-notebook python3-ipykernel")
	home, logDir := t.TempDir(), t.TempDir()
	env, marker := nodeEnv(t)
	s := apps.NewSupervisor(apps.SupervisorConfig{Home: home, LogDir: logDir, BaseEnv: env})
	defer s.StopAll()
	tok := make([]byte, 16)
	rand.Read(tok)
	token := hex.EncodeToString(tok)
	const base = "/api/v1/workspaces/default/computes/ci1/applications/jupyter/"
	if err := s.Start(apps.JupyterApp(bin, freePort(t), base, token, home)); err != nil {
		t.Fatal(err)
	}
	logOnFailure := func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(logDir, "jupyter.log"))
			t.Logf("jupyter.log:\n%s", b)
		}
	}
	defer logOnFailure()
	waitFor(t, 90*time.Second, "Jupyter to be ready", func() bool { return status(s, "jupyter").Ready })
	addr := status(s, "jupyter").Addr
	call := func(method, path, token string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+addr+base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "token "+token)
		}
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if code, b := call("GET", "api/kernels", token); code != 200 || strings.TrimSpace(string(b)) != "[]" {
		t.Fatalf("GET api/kernels: %d %s", code, b)
	}
	// A POST with the token needs no XSRF cookie: the token is the proof.
	code, b := call("POST", "api/kernels", token)
	var k struct{ ID, Name string }
	if code != 201 || json.Unmarshal(b, &k) != nil || k.ID == "" {
		t.Fatalf("POST api/kernels: %d %s", code, b)
	}
	if code, b := call("GET", "api/terminals", token); code != 200 {
		t.Fatalf("GET api/terminals: %d %s", code, b)
	}
	for _, try := range []struct{ method, path, token string }{
		{"GET", "api/kernels", ""}, {"POST", "api/kernels", ""}, {"GET", "api/kernels", "wrong"},
	} {
		if code, _ := call(try.method, try.path, try.token); code != http.StatusForbidden {
			t.Errorf("%s %s with token %q: %d, want 403", try.method, try.path, try.token, code)
		}
	}
	// The kernel's WebSocket as the proxy opens it: the browser's Origin
	// (the Shoal server), Host rewritten to the notebook's address, and the
	// token. Jupyter's Origin check stays on, and lets it through because
	// of the token.
	if status := wsHandshake(t, addr, base+"api/kernels/"+k.ID+"/channels", token, "https://shoal.example.com"); status != 101 {
		t.Errorf("kernel WebSocket with the token from another origin: %d, want 101", status)
	}
	if status := wsHandshake(t, addr, base+"api/kernels/"+k.ID+"/channels", "", "https://evil.example.com"); status == 101 {
		t.Error("kernel WebSocket without the token was accepted")
	}
	// Jupyter and the kernel carry the instance's SHOAL_NODE_ID.
	if got := procsWith(marker); len(got) < 2 {
		t.Errorf("processes with %s: %v, want the notebook server and its kernel", marker, got)
	}
	s.StopAll()
	waitFor(t, 10*time.Second, "no Jupyter process left", func() bool { return len(procsWith(marker)) == 0 })
	if _, _, err := get("http://" + addr + base + "api/status"); err == nil {
		t.Error("Jupyter still answers after StopAll")
	}
}

// wsHandshake opens a WebSocket (the handshake only) and returns the HTTP
// status of the answer.
func wsHandshake(t *testing.T, addr, path, token, origin string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	var req bytes.Buffer
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n", path, addr)
	fmt.Fprintf(&req, "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: %s\r\n", origin)
	fmt.Fprintf(&req, "X-Forwarded-For: 192.0.2.7\r\nX-Forwarded-Proto: https\r\nX-Forwarded-Host: shoal.example.com\r\n")
	if token != "" {
		fmt.Fprintf(&req, "Authorization: token %s\r\n", token)
	}
	req.WriteString("\r\n")
	if _, err := c.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
