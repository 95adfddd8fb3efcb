package apps_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/apps"
)

func get(url string) (int, string, error) {
	c := &http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// A custom application: ready, restarted when killed, stopped with its
// whole tree.
func TestSupervisorCustomApp(t *testing.T) {
	home, logDir := t.TempDir(), t.TempDir()
	env, marker := nodeEnv(t)
	os.WriteFile(filepath.Join(home, "index.html"), []byte("custom app"), 0o600)
	s := apps.NewSupervisor(apps.SupervisorConfig{Home: home, LogDir: logDir, BaseEnv: env, StopGrace: 3 * time.Second})
	defer s.StopAll()
	// A helper in a session of its own, the way Jupyter starts kernels:
	// StopAll must end it too.
	cmd := fmt.Sprintf(`echo "port $PORT node $SHOAL_NODE_ID app $APP_VAR in $PWD"; setsid sleep 100 & exec %s -m http.server "$PORT" --bind 127.0.0.1`, python(t))
	if err := s.Start(apps.App{Name: "files", Command: []string{"/bin/bash", "-c", cmd}, Env: []string{"APP_VAR=x1"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(apps.App{Name: "files", Command: []string{"true"}}); err == nil {
		t.Error("a second application of the same name was accepted")
	}
	waitFor(t, 20*time.Second, "the app to be ready", func() bool { return status(s, "files").Ready })
	st := status(s, "files")
	if !st.Running || !s.Running("files") || st.Port == 0 || st.Addr != fmt.Sprintf("127.0.0.1:%d", st.Port) || st.PID == 0 || st.Restarts != 0 || st.Since.IsZero() {
		t.Fatalf("status %+v", st)
	}
	if code, body, err := get("http://" + st.Addr + "/index.html"); err != nil || code != 200 || body != "custom app" {
		t.Fatalf("GET: %d %q %v", code, body, err)
	}

	// Killed, it comes back, on the same port.
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the exit to be seen", func() bool { return status(s, "files").LastExit != "" })
	if got := status(s, "files").LastExit; got != "killed by signal killed" {
		t.Errorf("LastExit %q", got)
	}
	waitFor(t, 20*time.Second, "a restart", func() bool { st := status(s, "files"); return st.Restarts == 1 && st.Ready })
	again := status(s, "files")
	if again.PID == st.PID || again.Addr != st.Addr || !again.Since.After(st.Since) {
		t.Errorf("after the restart: %+v, before: %+v", again, st)
	}
	if code, body, err := get("http://" + again.Addr + "/index.html"); err != nil || code != 200 || body != "custom app" {
		t.Fatalf("GET after the restart: %d %q %v", code, body, err)
	}

	began := time.Now()
	s.StopAll()
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("StopAll took %s", took)
	}
	if _, _, err := get("http://" + again.Addr + "/"); err == nil {
		t.Error("the app still answers after StopAll")
	}
	if st := status(s, "files"); st.Running || st.Ready || st.PID != 0 || s.Running("files") {
		t.Errorf("after StopAll: %+v", st)
	}
	// The first run's setsid'd helper was left to run when it crashed;
	// StopAll ends them all.
	if left := procsWith(marker); len(left) > 0 {
		t.Errorf("processes %v outlived StopAll", left)
	}
	if err := s.Start(apps.App{Name: "late", Command: []string{"true"}}); err == nil {
		t.Error("Start after StopAll was accepted")
	}
	log, _ := os.ReadFile(filepath.Join(logDir, "files.log"))
	for _, want := range []string{
		fmt.Sprintf("port %d node %s app x1 in %s", st.Port, strings.TrimPrefix(marker, "SHOAL_NODE_ID="), home),
		"== files killed by signal killed",
		"== files stopped",
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("files.log lacks %q:\n%s", want, log)
		}
	}
}

// An application that exits at once is retried with backoff (1 s, 2 s...),
// not in a busy loop.
func TestSupervisorBackoff(t *testing.T) {
	env, _ := nodeEnv(t)
	s := apps.NewSupervisor(apps.SupervisorConfig{Home: t.TempDir(), LogDir: t.TempDir(), BaseEnv: env})
	defer s.StopAll()
	if err := s.Start(apps.App{Name: "crash", Command: []string{"/bin/bash", "-c", "echo crashing; exit 7"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(apps.App{Name: "missing", Command: []string{"/nonexistent/server"}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	for _, st := range s.Status() {
		if st.Running || st.Ready || st.Restarts < 1 || st.Restarts > 3 {
			t.Errorf("status %+v: want a few restarts with backoff, not a busy loop", st)
		}
		want := map[string]string{"crash": "exited with code 7", "missing": "could not start: "}[st.Name]
		if !strings.HasPrefix(st.LastExit, want) {
			t.Errorf("%s: LastExit %q, want %q", st.Name, st.LastExit, want)
		}
	}
	began := time.Now()
	s.StopAll() // in the middle of a backoff: at once
	if took := time.Since(began); took > time.Second {
		t.Errorf("StopAll took %s", took)
	}
}

func TestSupervisorRefuses(t *testing.T) {
	s := apps.NewSupervisor(apps.SupervisorConfig{Home: t.TempDir(), LogDir: t.TempDir()})
	defer s.StopAll()
	for _, app := range []apps.App{
		{Name: "", Command: []string{"true"}},
		{Name: "../x", Command: []string{"true"}},
		{Name: "nocmd"},
	} {
		if err := s.Start(app); err == nil {
			t.Errorf("%+v was accepted", app)
		}
	}
	if len(s.Status()) != 0 {
		t.Errorf("status %+v", s.Status())
	}
}

// SIGTERM is enough for most; what ignores it is killed after StopGrace.
func TestSupervisorStopGrace(t *testing.T) {
	env, marker := nodeEnv(t)
	s := apps.NewSupervisor(apps.SupervisorConfig{Home: t.TempDir(), LogDir: t.TempDir(), BaseEnv: env, StopGrace: time.Second})
	if err := s.Start(apps.App{Name: "stubborn", Command: []string{"/bin/bash", "-c", "trap '' TERM; while :; do sleep 0.1; done"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the app to run", func() bool { return s.Running("stubborn") })
	time.Sleep(200 * time.Millisecond) // let it set its trap
	began := time.Now()
	s.StopAll()
	if took := time.Since(began); took < time.Second || took > 4*time.Second {
		t.Errorf("StopAll took %s, want about the grace, 1 s", took)
	}
	if left := procsWith(marker); len(left) > 0 {
		t.Errorf("processes %v outlived StopAll", left)
	}
	if got := status(s, "stubborn").LastExit; got != "stopped: killed by signal killed" {
		t.Errorf("LastExit %q", got)
	}
}
