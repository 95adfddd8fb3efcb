package apps_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/apps"
	"github.com/shoal-ml/shoal/internal/testenv"
)

// waitFor polls cond until it holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// nodeEnv returns the test process's environment with a SHOAL_NODE_ID of
// its own, the way the agent gives one to its processes, and that
// variable, by which the test finds what they left behind.
func nodeEnv(t *testing.T) (env []string, marker string) {
	b := make([]byte, 8)
	rand.Read(b)
	marker = "SHOAL_NODE_ID=apps-test-" + hex.EncodeToString(b)
	for _, kv := range os.Environ() {
		if !bytes.HasPrefix([]byte(kv), []byte("SHOAL_")) {
			env = append(env, kv)
		}
	}
	env = append(env, marker)
	t.Cleanup(func() {
		// Nothing may outlive a test; if something did, the test has
		// already failed, and the processes are its own.
		for _, pid := range procsWith(marker) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return env, marker
}

// procsWith lists live processes whose environment holds kv.
func procsWith(kv string) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, append(env, 0)...), []byte("\x00"+kv+"\x00")) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		if alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// alive reports whether pid is a process that has not ended (a zombie has).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// python is Debian's python3: the custom application of the tests.
func python(t *testing.T) string {
	t.Helper()
	return testenv.Python3(t)
}

func status(s *apps.Supervisor, name string) apps.AppStatus {
	for _, st := range s.Status() {
		if st.Name == name {
			return st
		}
	}
	return apps.AppStatus{}
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	waitFor(t, 5*time.Second, "pid file "+path, func() bool {
		b, err := os.ReadFile(path)
		pid, _ = strconv.Atoi(string(bytes.TrimSpace(b)))
		return err == nil && pid > 0
	})
	return pid
}
