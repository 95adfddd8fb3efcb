package containertest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
)

// probe prints, one per line, what a rank sees of its container: user,
// working directory, an env variable, the read-only mount's content and
// whether it can be written, the memory limit (cgroup v1 or v2), the
// open-files limit; and writes to the read-write mount and to stderr.
const probe = `
import os, resource, sys
print("uid", os.getuid(), os.getgid())
print("cwd", os.getcwd())
print("env", os.environ.get("SHOAL_PROBE"))
print("ro", open("/in/input.txt").read().strip())
try:
    open("/in/x", "w"); print("ro-writable yes")
except OSError:
    print("ro-writable no")
open("/out/result.txt", "w").write("written by the container\n")
mem = "?"
for p in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
    if os.path.exists(p):
        mem = open(p).read().strip(); break
print("mem", mem)
print("nofile", resource.getrlimit(resource.RLIMIT_NOFILE)[0])
print("to stderr", file=sys.stderr)
sys.exit(5)
`

func testRunSpec(t *testing.T, h Harness) {
	in, out := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(in, "input.txt"), "input data")
	if err := os.Chmod(out, 0o777); err != nil { // written by uid 1234
		t.Fatal(err)
	}
	code, stdout, stderr := runToEnd(t, h.Runtime, container.Spec{
		Name:        "shoal-test-spec-" + token(),
		Image:       h.BaseImage,
		Entrypoint:  []string{"python3", "-c"},
		Command:     []string{probe},
		Env:         map[string]string{"SHOAL_PROBE": "value with spaces = and equals"},
		WorkingDir:  "/tmp",
		User:        "1234:1234",
		Mounts:      []container.Mount{{Source: in, Target: "/in", ReadOnly: true}, {Source: out, Target: "/out"}},
		MemoryBytes: 64 << 20,
		NanoCPUs:    500_000_000,
		Ulimits:     []container.Ulimit{{Name: "nofile", Soft: 512, Hard: 1024}},
		Labels:      map[string]string{"shoal.job": "spec-" + token(), "shoal.rank": "0"},
	})
	if code != 5 {
		t.Errorf("exit code %d, want 5", code)
	}
	for _, want := range []string{
		"uid 1234 1234", "cwd /tmp", "env value with spaces = and equals", "ro input data", "ro-writable no",
		fmt.Sprintf("mem %d", 64<<20), "nofile 512",
	} {
		if !strings.Contains(stdout, want+"\n") {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if stderr != "to stderr\n" {
		t.Errorf("stderr %q, want the container's stderr alone", stderr)
	}
	if got, err := os.ReadFile(filepath.Join(out, "result.txt")); err != nil || string(got) != "written by the container\n" {
		t.Errorf("the read-write mount: %q, %v", got, err)
	}
}

func testRunRefusesBadSpec(t *testing.T, h Harness) {
	ctx := ctxFor(t, time.Minute)
	for _, c := range []struct {
		name  string
		spec  container.Spec
		field string
	}{
		{"no image", container.Spec{}, "Image"},
		{"user by name", container.Spec{Image: h.BaseImage, User: "root"}, "User"},
		{"relative workdir", container.Spec{Image: h.BaseImage, WorkingDir: "tmp"}, "WorkingDir"},
		{"bad env key", container.Spec{Image: h.BaseImage, Env: map[string]string{"A=B": "x"}}, "Env"},
		{"missing mount source", container.Spec{Image: h.BaseImage, Mounts: []container.Mount{{Source: "/nonexistent-" + token(), Target: "/x"}}}, "Mounts[0]"},
		{"network", container.Spec{Image: h.BaseImage, Network: "ns:/proc/1/ns/net"}, "Network"},
		{"network of no container", container.Spec{Image: h.BaseImage, Network: "container:"}, "Network"},
		{"ulimit over the host's", container.Spec{Image: h.BaseImage, Ulimits: []container.Ulimit{{Name: "nofile", Soft: 1, Hard: 1 << 40}}}, "Ulimits[0]"},
		{"device outside /dev", container.Spec{Image: h.BaseImage, Devices: []container.Device{{Path: "/etc/passwd"}}}, "Devices[0]"},
	} {
		_, err := h.Runtime.Run(ctx, c.spec)
		wantKind(t, c.name, err, container.ErrInvalid)
		if err != nil && !strings.Contains(err.Error(), "spec."+c.field) {
			t.Errorf("%s: the error does not name spec.%s: %v", c.name, c.field, err)
		}
	}
	_, err := h.Runtime.Run(ctx, container.Spec{Image: "localhost/shoal-absent/image:" + token()})
	wantKind(t, "run an image that is not local", err, container.ErrNotFound)
}

func testNetwork(t *testing.T, h Harness) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, "hello from the host")
			c.Close()
		}
	}()
	dial := fmt.Sprintf(`import socket
try:
    s = socket.create_connection(("127.0.0.1", %d), timeout=5); print(s.recv(100).decode().strip())
except OSError as e:
    print("no connection")`, l.Addr().(*net.TCPAddr).Port)
	_, out, _ := runToEnd(t, h.Runtime, container.Spec{Image: h.BaseImage, Command: []string{"python3", "-c", dial}, Network: "host"})
	if out != "hello from the host\n" {
		t.Errorf("host network: %q, want the host's 127.0.0.1 reached", out)
	}
	_, out, _ = runToEnd(t, h.Runtime, container.Spec{Image: h.BaseImage, Command: []string{"python3", "-c", dial}, Network: "none"})
	if out != "no connection\n" {
		t.Errorf("no network: %q, want no connection", out)
	}
}

func testStop(t *testing.T, h Harness) {
	rt := h.Runtime
	// A rank that handles SIGTERM ends within the grace period, its own way.
	var stdout syncBuffer
	id, err := rt.Run(ctxFor(t, time.Minute), container.Spec{Image: h.BaseImage, Stdout: &stdout, Command: []string{"python3", "-u", "-c", `
import signal, sys, time
def term(*_):
    print("got SIGTERM"); sys.exit(3)
signal.signal(signal.SIGTERM, term)
print("ready")
time.sleep(300)`}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Remove(context.Background(), id)
	waitFor(t, "the container to be ready", func() bool { return strings.Contains(stdout.String(), "ready") })
	if err := rt.Stop(ctxFor(t, time.Minute), id, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	code, err := rt.Wait(ctxFor(t, time.Minute), id)
	if err != nil || code != 3 || !strings.Contains(stdout.String(), "got SIGTERM") {
		t.Errorf("after SIGTERM: exit %d (%v), output %q; want 3 and the handler's line", code, err, stdout.String())
	}
	if err := rt.Stop(ctxFor(t, time.Minute), id, time.Second); err != nil {
		t.Errorf("stopping a stopped container: %v", err)
	}

	// One that ignores it is killed once the grace period is over.
	stdout = syncBuffer{}
	id2, err := rt.Run(ctxFor(t, time.Minute), container.Spec{Image: h.BaseImage, Stdout: &stdout, Command: []string{"python3", "-u", "-c", `
import signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready")
time.sleep(300)`}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Remove(context.Background(), id2)
	waitFor(t, "the container to be ready", func() bool { return strings.Contains(stdout.String(), "ready") })
	began := time.Now()
	if err := rt.Stop(ctxFor(t, time.Minute), id2, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	code, err = rt.Wait(ctxFor(t, time.Minute), id2)
	if err != nil || code != 137 {
		t.Errorf("after the grace period: exit %d (%v), want 137 (SIGKILL)", code, err)
	}
	if took < 1500*time.Millisecond || took > 15*time.Second {
		t.Errorf("stop took %s with a 2 s grace period", took)
	}
}

func testRemove(t *testing.T, h Harness) {
	rt := h.Runtime
	labels := map[string]string{"shoal.job": "leak-" + token()}
	var ids []string
	for rank := range 2 {
		l := map[string]string{"shoal.job": labels["shoal.job"], "shoal.rank": fmt.Sprint(rank)}
		id, err := rt.Run(ctxFor(t, time.Minute), container.Spec{Image: h.BaseImage, Command: []string{"sleep", "300"}, Labels: l})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	listed, err := rt.List(ctxFor(t, time.Minute), labels)
	if err != nil || len(listed) != 2 {
		t.Fatalf("List by label: %+v, %v; want the job's 2 containers", listed, err)
	}
	one, err := rt.List(ctxFor(t, time.Minute), map[string]string{"shoal.job": labels["shoal.job"], "shoal.rank": "1"})
	if err != nil || len(one) != 1 || one[0].ID != ids[1] || one[0].Labels["shoal.rank"] != "1" {
		t.Errorf("List by job and rank: %+v, %v; want rank 1 alone", one, err)
	}
	for _, s := range listed {
		if err := rt.Remove(ctxFor(t, time.Minute), s.ID); err != nil {
			t.Errorf("remove a running container: %v", err)
		}
	}
	if left, err := rt.List(ctxFor(t, time.Minute), labels); err != nil || len(left) != 0 {
		t.Errorf("after Remove: %+v, %v; want nothing left", left, err)
	}
	if err := rt.Remove(ctxFor(t, time.Minute), ids[0]); err != nil {
		t.Errorf("removing a removed container: %v", err)
	}
	_, err = rt.Wait(ctxFor(t, time.Minute), ids[0])
	wantKind(t, "wait for a removed container", err, container.ErrNotFound)
}

// waitFor polls cond for up to a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
