package container_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/internal/testctr"
)

// A long-lived container in a user namespace of its own, as a compute
// instance is: exec runs as its user and as root inside, root inside is
// not root on the host, the chowned home is the user's inside, and
// State reads its pid and CPU time.
func TestExecInUserNamespace(t *testing.T) {
	env := testctr.Shared(t)
	image := testctr.InstanceImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e, err := container.Open(ctx, container.Config{Host: env.Host, EnginePID: env.Podman.PID()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	home := t.TempDir()
	id, err := e.Run(ctx, container.Spec{
		Image: image, User: "1000:1000", Userns: "auto", Network: "host",
		Entrypoint: []string{"/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"},
		Mounts: []container.Mount{{Source: home, Target: "/home/azureuser", Chown: true},
			{Source: "/sys", Target: "/sys", ReadOnly: true}},
		Labels: map[string]string{"shoal.test": t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Remove(context.Background(), id)

	run := func(opts container.ExecOptions) (string, int) {
		t.Helper()
		var out, errb bytes.Buffer
		opts.Stdout, opts.Stderr = &out, &errb
		code, err := e.ExecWait(ctx, id, opts)
		if err != nil {
			t.Fatalf("exec %v: %v", opts.Command, err)
		}
		return strings.TrimSpace(out.String() + errb.String()), code
	}
	if out, code := run(container.ExecOptions{Command: []string{"id", "-u"}}); out != "1000" || code != 0 {
		t.Errorf("id -u as the container's user: %q (exit %d), want 1000", out, code)
	}
	if out, code := run(container.ExecOptions{Command: []string{"sudo", "-n", "id", "-u"}}); out != "0" || code != 0 {
		t.Errorf("sudo id -u: %q (exit %d), want 0", out, code)
	}
	if _, code := run(container.ExecOptions{Command: []string{"sh", "-c", "exit 3"}}); code != 3 {
		t.Errorf("exit code %d, want 3", code)
	}
	if out, _ := run(container.ExecOptions{Command: []string{"sh", "-c", "echo $GREETING; pwd"}, Env: map[string]string{"GREETING": "hi"}, WorkingDir: "/tmp"}); out != "hi\n/tmp" {
		t.Errorf("env and working dir: %q", out)
	}
	if out, _ := run(container.ExecOptions{Command: []string{"cat"}, Stdin: strings.NewReader("in\n")}); out != "in" {
		t.Errorf("stdin: %q", out)
	}
	if _, code := run(container.ExecOptions{Command: []string{"sh", "-c", "echo x > /home/azureuser/f"}}); code != 0 {
		t.Fatalf("writing the home: exit %d", code)
	}
	if _, err := e.ExecWait(ctx, id, container.ExecOptions{Command: []string{"sh", "-c", "exec -a shoal-detached sleep 60"}, Detach: true}); err != nil {
		t.Fatal(err)
	}
	_, err = e.ExecWait(ctx, id, container.ExecOptions{Command: []string{"id"}, User: "root"})
	if !errors.Is(err, container.ErrInvalid) || !strings.Contains(err.Error(), "opts.User") {
		t.Errorf("a user by name: %v, want ErrInvalid naming opts.User", err)
	}

	st, err := e.State(ctx, id)
	if err != nil || !st.Running || st.Pid <= 0 {
		t.Fatalf("state: %+v, %v", st, err)
	}
	// Inside uid 0 (and 1000) map to host uids that are not root's.
	hostUID := procUID(t, st.Pid)
	if hostUID == 0 || hostUID == 1000 {
		t.Errorf("the container's user is host uid %d: no user namespace", hostUID)
	}
	fi, err := os.Stat(filepath.Join(home, "f"))
	if err != nil {
		t.Fatal(err)
	}
	if uid := int(fi.Sys().(*syscall.Stat_t).Uid); uid != hostUID {
		t.Errorf("a file the user wrote in the home is host uid %d, want the user's mapped uid %d", uid, hostUID)
	}
	if st.CPUNanos == 0 {
		t.Errorf("CPU time 0 after several execs")
	}
	if err := e.Stop(ctx, id, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if st, err := e.State(ctx, id); err != nil || st.Running {
		t.Errorf("state after stop: %+v, %v", st, err)
	}
}

// procUID is a host process's real uid.
func procUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Fatalf("no Uid in /proc/%d/status", pid)
	return -1
}
