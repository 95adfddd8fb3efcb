package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// instanceView is what `compute show` prints of an instance, the fields
// the tests read.
type instanceView struct {
	Name                   string `json:"name"`
	Type                   string `json:"type"`
	State                  string `json:"state"`
	AssignedUser           string `json:"assigned_user"`
	EnableSSO              *bool  `json:"enable_sso"`
	SSHPublicAccessEnabled *bool  `json:"ssh_public_access_enabled"`
	SSHSettings            *struct {
		AdminUsername string `json:"admin_username"`
		SSHPort       int    `json:"ssh_port"`
		SSHKeyValue   string `json:"ssh_key_value"`
		HostKey       string `json:"host_key"`
	} `json:"ssh_settings"`
	SSHConnectionString string `json:"ssh_connection_string"`
	LastOperation       *struct {
		Name    string `json:"operation_name"`
		Status  string `json:"operation_status"`
		Trigger string `json:"operation_trigger"`
	} `json:"last_operation"`
	IdleState *struct {
		IdleMinutes int      `json:"idle_minutes"`
		Activity    []string `json:"activity"`
	} `json:"idle_state"`
	Applications []struct {
		Name  string `json:"display_name"`
		URI   string `json:"endpoint_uri"`
		Ready bool   `json:"ready"`
	} `json:"applications"`
	IdleMinutes *int `json:"idle_time_before_shutdown_minutes"`
	Schedules   *struct {
		ComputeStartStop []map[string]any `json:"compute_start_stop"`
	} `json:"schedules"`
}

func (v instanceView) String() string {
	op := "none"
	if v.LastOperation != nil {
		op = fmt.Sprintf("%s %s (%s)", v.LastOperation.Name, v.LastOperation.Status, v.LastOperation.Trigger)
	}
	return fmt.Sprintf("instance %s: state %s, last operation %s", v.Name, v.State, op)
}

func showInstance(t *testing.T, env []string, name string) instanceView {
	t.Helper()
	return runJSON[instanceView](t, env, "compute", "show", "-n", name, "-o", "json")
}

func waitInstanceState(t *testing.T, env []string, name string, timeout time.Duration, states ...string) instanceView {
	t.Helper()
	var v instanceView
	waitFor(t, timeout, "instance "+name+" to be "+strings.Join(states, " or "), func() (bool, string) {
		v = showInstance(t, env, name)
		return slices.Contains(states, v.State) && (v.LastOperation == nil || v.LastOperation.Status != "InProgress"), v.String()
	})
	return v
}

// sshKey makes an ed25519 key pair with ssh-keygen; it returns the private
// key's path (the public key is path + ".pub").
func sshKey(t *testing.T, name string) string {
	t.Helper()
	bin := testenv.OpenSSH(t, "ssh-keygen")
	path := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command(bin, "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	return path
}

// sshOpts are the OpenSSH options of the tests: no config, no agent, no
// host key prompt (the known_hosts file is the test's own).
func sshOpts(t *testing.T, key string) []string {
	return []string{"-F", "/dev/null", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "StrictHostKeyChecking=accept-new",
		"-o", "UserKnownHostsFile=" + filepath.Join(filepath.Dir(key), "known_hosts"), "-o", "ConnectTimeout=10", "-i", key}
}

// sshRun runs a command on an instance with the real OpenSSH client.
func sshRun(t *testing.T, key string, port int, command string) (string, string, int) {
	t.Helper()
	return runSSH(t, key, port, "azureuser", command)
}

// runSSH runs a command as user at 127.0.0.1:port with the real OpenSSH
// client, returning stdout, stderr and the exit code.
func runSSH(t *testing.T, key string, port int, user, command string) (string, string, int) {
	t.Helper()
	bin := testenv.OpenSSH(t, "ssh")
	// A session in an instance's container starts through the engine
	// (podman exec), which took over 20 s on a loaded CI machine.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append(sshOpts(t, key), "-p", strconv.Itoa(port), user+"@127.0.0.1", command)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("ssh: %v", err)
	}
	return out.String(), errb.String(), code
}

func instanceFile(t *testing.T, name string) string {
	t.Helper()
	return testdataFile(t, "instances", name)
}

// withUsers creates users with a role in the default workspace and
// returns the CLI environment of each.
func withUsers(t *testing.T, s *server, roles map[string]string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for user, role := range roles {
		mustRun(t, s.env, "user", "create", "--name", user, "-o", "none")
		mustRun(t, s.env, "role", "assign", "--user", user, "--role", role, "-o", "none")
		tok := runJSON[map[string]any](t, s.env, "token", "create", "--user", user, "--name", "laptop", "-o", "json")
		out[user] = append(slices.Clone(s.env), "SHOAL_TOKEN="+jsonStr(tok["token"]))
	}
	return out
}

// instanceVariant writes a copy of an instance testdata file with each old
// string replaced by its new one, and returns its path.
func instanceVariant(t *testing.T, name string, replacements ...string) string {
	t.Helper()
	return testdataVariant(t, "instances", name, replacements...)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	// What is written becomes the owner's of the folder it is written in
	// (an instance's home is its user's account's, not the test's).
	owner := filepath.Dir(path)
	for {
		if _, err := os.Stat(owner); err == nil {
			break
		}
		owner = filepath.Dir(owner)
	}
	fi, err := os.Stat(owner)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o700); err != nil {
		t.Fatal(err)
	}
	for p := path; p != owner && len(p) > len(owner); p = filepath.Dir(p) {
		if err := os.Lchown(p, int(st.Uid), int(st.Gid)); err != nil {
			t.Fatal(err)
		}
	}
}
