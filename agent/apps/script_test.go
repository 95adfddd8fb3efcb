package apps_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/apps"
)

func TestRunScriptCommand(t *testing.T) {
	home := t.TempDir()
	env, marker := nodeEnv(t)
	logPath := filepath.Join(t.TempDir(), "setup.log")
	res := apps.RunScript(context.Background(), apps.Script{Name: "creation_script",
		Command: `echo "hello from setup in $PWD"; echo to stderr >&2; echo "$SHOAL_NODE_ID" > node; touch made`,
		Timeout: 10 * time.Second}, home, env, logPath)
	if res.Err != nil || res.ExitCode != 0 || res.TimedOut || res.Log != logPath || !res.Ended.After(res.Started) {
		t.Fatalf("result %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "node")); "SHOAL_NODE_ID="+strings.TrimSpace(string(b)) != marker {
		t.Errorf("the script saw SHOAL_NODE_ID %q, want the one it was given", b)
	}
	log, _ := os.ReadFile(logPath)
	for _, want := range []string{"== creation_script: /bin/bash -c", "hello from setup in " + home, "to stderr", "creation_script succeeded"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
}

func TestRunScriptFails(t *testing.T) {
	home := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "setup.log")
	res := apps.RunScript(context.Background(), apps.Script{Name: "startup_script", Command: "echo failing; exit 3"}, home, nil, logPath)
	if res.ExitCode != 3 || res.TimedOut || res.Err == nil || res.Err.Error() != "startup_script exited with code 3" {
		t.Fatalf("result %+v", res)
	}
	log, _ := os.ReadFile(logPath)
	if !strings.Contains(string(log), "failing\n== startup_script failed: startup_script exited with code 3") {
		t.Errorf("log:\n%s", log)
	}
}

func TestRunScriptPath(t *testing.T) {
	home := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "setup.log")
	os.MkdirAll(filepath.Join(home, "scripts"), 0o700)
	// Not executable, no shebang: it is run with bash, as on Azure.
	os.WriteFile(filepath.Join(home, "scripts", "setup.sh"), []byte("echo from file in $PWD with $BASH_VERSION\n"), 0o600)
	res := apps.RunScript(context.Background(), apps.Script{Name: "startup_script", Path: "scripts/setup.sh"}, home, nil, logPath)
	if res.Err != nil || res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	// Out of the home is the user's business.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "x.sh"), []byte("echo from outside\n"), 0o600)
	rel, _ := filepath.Rel(home, filepath.Join(other, "x.sh"))
	if res := apps.RunScript(context.Background(), apps.Script{Name: "creation_script", Path: rel}, home, nil, logPath); res.Err != nil {
		t.Fatalf("path %s: %+v", rel, res)
	}
	log, _ := os.ReadFile(logPath)
	for _, want := range []string{"from file in " + home + " with 5", "from outside"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
}

func TestRunScriptMissingPath(t *testing.T) {
	home := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "setup.log")
	res := apps.RunScript(context.Background(), apps.Script{Name: "creation_script", Path: "missing.sh"}, home, nil, logPath)
	want := "creation_script: script missing.sh not found on the instance"
	if res.Err == nil || !strings.Contains(res.Err.Error(), want) || res.ExitCode != -1 {
		t.Fatalf("result %+v, want an error saying %q", res, want)
	}
	log, _ := os.ReadFile(logPath)
	if !strings.Contains(string(log), want) {
		t.Errorf("the log lacks %q:\n%s", want, log)
	}
}

// A script out of time goes with its whole tree: its child in its
// process group, and one that left the group with setsid.
func TestRunScriptTimeoutKillsTree(t *testing.T) {
	home := t.TempDir()
	env, marker := nodeEnv(t)
	logPath := filepath.Join(t.TempDir(), "setup.log")
	began := time.Now()
	res := apps.RunScript(context.Background(), apps.Script{Name: "creation_script",
		Command: "sleep 100 & echo $! > child.pid; setsid sleep 100 & echo $! > session.pid; echo waiting; wait",
		Timeout: time.Second}, home, env, logPath)
	if !res.TimedOut || res.ExitCode != -1 || res.Err == nil || res.Err.Error() != "creation_script timed out after 1s and was killed" {
		t.Fatalf("result %+v", res)
	}
	if took := time.Since(began); took > 8*time.Second {
		t.Errorf("the timeout took %s to end the script", took)
	}
	for _, f := range []string{"child.pid", "session.pid"} {
		if pid := readPID(t, filepath.Join(home, f)); alive(pid) {
			t.Errorf("the script's process %d (%s) outlived its timeout", pid, f)
		}
	}
	if left := procsWith(marker); len(left) > 0 {
		t.Errorf("processes %v outlived the script", left)
	}
	log, _ := os.ReadFile(logPath)
	if !strings.Contains(string(log), "waiting\n") || !strings.Contains(string(log), "timed out after 1s") {
		t.Errorf("log:\n%s", log)
	}
}

// Stopping the instance stops its setup script.
func TestRunScriptContextStops(t *testing.T) {
	env, marker := nodeEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res := apps.RunScript(ctx, apps.Script{Name: "startup_script", Command: "sleep 100"}, t.TempDir(), env, filepath.Join(t.TempDir(), "log"))
	if res.TimedOut || res.Err == nil || !strings.Contains(res.Err.Error(), "startup_script was stopped before its end") {
		t.Fatalf("result %+v", res)
	}
	if left := procsWith(marker); len(left) > 0 {
		t.Errorf("processes %v outlived the script", left)
	}
}

// What a successful script starts in the background keeps running, as on
// a virtual machine.
func TestRunScriptKeepsBackgroundOnSuccess(t *testing.T) {
	home := t.TempDir()
	env, _ := nodeEnv(t)
	res := apps.RunScript(context.Background(), apps.Script{Name: "startup_script", Command: "nohup sleep 100 >/dev/null 2>&1 & echo $! > bg.pid"}, home, env, filepath.Join(t.TempDir(), "log"))
	if res.Err != nil {
		t.Fatalf("result %+v", res)
	}
	pid := readPID(t, filepath.Join(home, "bg.pid"))
	defer syscall.Kill(pid, syscall.SIGKILL)
	time.Sleep(200 * time.Millisecond)
	if !alive(pid) {
		t.Fatal("the script's background process was killed when the script succeeded")
	}
}
