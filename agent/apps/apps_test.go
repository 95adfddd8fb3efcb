package apps_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/apps"
)

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestRunScript(t *testing.T) {
	home := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "setup.log")
	ctx := context.Background()
	res := apps.RunScript(ctx, apps.Script{Name: "creation_script", Command: "echo hello from setup; touch made", Timeout: 10 * time.Second}, home, os.Environ(), logPath)
	if res.Err != nil || res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(filepath.Join(home, "made")); err != nil {
		t.Fatal("the script did not run in the home")
	}
	os.WriteFile(filepath.Join(home, "setup.sh"), []byte("echo from file; exit 4\n"), 0o700)
	res = apps.RunScript(ctx, apps.Script{Name: "startup_script", Path: "setup.sh", Timeout: 10 * time.Second}, home, os.Environ(), logPath)
	if res.ExitCode != 4 || res.Err == nil || !strings.Contains(res.Err.Error(), "code 4") {
		t.Fatalf("failing script: %+v", res)
	}
	res = apps.RunScript(ctx, apps.Script{Name: "startup_script", Path: "missing.sh"}, home, os.Environ(), logPath)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "not found") {
		t.Fatalf("missing script: %+v", res)
	}
	pidFile := filepath.Join(home, "child.pid")
	res = apps.RunScript(ctx, apps.Script{Name: "creation_script", Command: "sleep 100 & echo $! > child.pid; wait", Timeout: 500 * time.Millisecond}, home, os.Environ(), logPath)
	if !res.TimedOut || res.Err == nil || !strings.Contains(res.Err.Error(), "timed out") {
		t.Fatalf("timeout: %+v", res)
	}
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	waitFor(t, 5*time.Second, "the script's child to die", func() bool { return pid > 0 && !alive(pid) })
	log, _ := os.ReadFile(logPath)
	for _, want := range []string{"hello from setup", "from file", "creation_script succeeded", "exited with code 4", "not found", "timed out"} {
		if !bytes.Contains(log, []byte(want)) {
			t.Errorf("setup log lacks %q:\n%s", want, log)
		}
	}
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func python(t *testing.T) string {
	for _, p := range []string{"/usr/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed for a custom application (apt-get install python3)")
	}
	return p
}

func TestSupervisorRestartsAndStops(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "index.html"), []byte("custom app"), 0o600)
	s := apps.NewSupervisor(apps.SupervisorConfig{Home: home, LogDir: t.TempDir(), BaseEnv: os.Environ()})
	defer s.StopAll()
	port := freePort(t)
	if err := s.Start(apps.App{Name: "web", Command: []string{"/bin/sh", "-c", python(t) + " -m http.server $PORT --bind 127.0.0.1"}, Port: port}); err != nil {
		t.Fatal(err)
	}
	ready := func() bool {
		for _, st := range s.Status() {
			if st.Name == "web" && st.Ready {
				return true
			}
		}
		return false
	}
	waitFor(t, 20*time.Second, "the app to be ready", ready)
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/index.html", port))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "custom app" {
		t.Fatalf("answer %q", b)
	}
	// Killed, it comes back.
	exec.Command("pkill", "-KILL", "-f", fmt.Sprintf("http.server %d", port)).Run()
	waitFor(t, 20*time.Second, "a restart", func() bool {
		st := s.Status()
		return len(st) == 1 && st[0].Restarts >= 1 && st[0].Ready
	})
	s.StopAll()
	if _, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port)); err == nil {
		t.Fatal("the app still answers after StopAll")
	}
}

func TestSupervisorBacksOff(t *testing.T) {
	s := apps.NewSupervisor(apps.SupervisorConfig{Home: t.TempDir(), LogDir: t.TempDir()})
	defer s.StopAll()
	if err := s.Start(apps.App{Name: "crash", Command: []string{"/bin/false"}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3200 * time.Millisecond)
	st := s.Status()
	if len(st) != 1 || st[0].Running || st[0].LastExit == "" || st[0].Restarts > 3 || st[0].Restarts < 1 {
		t.Fatalf("status %+v; want a few restarts with backoff, not a busy loop", st)
	}
}

// The built-in notebook: the real Jupyter Notebook server from Debian.
func TestJupyter(t *testing.T) {
	bin, ok := apps.FindJupyter()
	if !ok {
		t.Fatal("Jupyter Notebook not found: apt-get install jupyter-notebook python3-ipykernel")
	}
	home := t.TempDir()
	tok := make([]byte, 16)
	rand.Read(tok)
	token := hex.EncodeToString(tok)
	marker := "SHOAL_NODE_ID=apps-test-" + token[:8]
	s := apps.NewSupervisor(apps.SupervisorConfig{Home: home, LogDir: t.TempDir(), BaseEnv: append(os.Environ(), marker)})
	defer s.StopAll()
	base := "/api/v1/workspaces/default/computes/ci1/applications/jupyter/"
	port := freePort(t)
	if err := s.Start(apps.JupyterApp(bin, port, base, token, home)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "Jupyter to be ready", func() bool { st := s.Status(); return len(st) == 1 && st[0].Ready })
	call := func(method, path string) (int, []byte) {
		req, _ := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:%d%s%s", port, base, path), nil)
		req.Header.Set("Authorization", "token "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if code, b := call("GET", "api/kernels"); code != 200 || strings.TrimSpace(string(b)) != "[]" {
		t.Fatalf("kernels: %d %s", code, b)
	}
	code, b := call("POST", "api/kernels")
	var k struct{ ID string }
	if code != 201 || json.Unmarshal(b, &k) != nil || k.ID == "" {
		t.Fatalf("start a kernel: %d %s", code, b)
	}
	if code, _ := call("GET", "api/terminals"); code != 200 {
		t.Fatalf("terminals: %d", code)
	}
	// Without the token Jupyter refuses.
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%sapi/kernels", port, base))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("kernels without the token: %d", resp.StatusCode)
	}
	s.StopAll()
	waitFor(t, 15*time.Second, "every Jupyter process to end", func() bool { return len(procsWith(marker)) == 0 })
}

// procsWith lists live processes whose environment holds kv.
func procsWith(kv string) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(append(env, 0), []byte(kv+"\x00")) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		if alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}
