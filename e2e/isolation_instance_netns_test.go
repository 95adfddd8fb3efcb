package e2e_test

import (
	"context"
	"fmt"
	"github.com/shoal-ml/shoal/internal/testenv"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Issue 35's attack, from an instance: alice's host-process instance
// serves her home on 127.0.0.1:PORT (python3 -m http.server); mallory,
// in a shell of her own host-process instance on the same host (the real
// OpenSSH client), reads http://127.0.0.1:PORT/notes.txt. As root (as CI
// runs it) each host-process instance has a network namespace of its
// own: alice's listener is on her instance's loopback, neither on the
// host's nor on mallory's, while mallory's shell still reaches the
// server at its advertised URL, alice still reaches her application
// through the proxy, and her `ssh -L` reaches it inside her instance.
func TestInstanceCannotReachAnotherInstancesLoopbackListener(t *testing.T) {
	t.Parallel()
	testenv.Root(t, "gives each instance a network namespace of its own (only a root agent does)")
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	users := withUsers(t, s, map[string]string{"alice": "Contributor", "mallory": "Contributor"})
	alice, mallory := users["alice"], users["mallory"]
	t.Cleanup(func() {
		run(t, s.env, "compute", "delete", "-n", "alice-ns-i", "--yes", "-o", "none")
		run(t, s.env, "compute", "delete", "-n", "mallory-ns-i", "--yes", "-o", "none")
		waitFor(t, time.Minute, "the agents to go", func() (bool, string) {
			left := agentProcs(s.nodesDir)
			return len(left) == 0, fmt.Sprint(left)
		})
	})
	aliceKey, malloryKey := sshKey(t, "alice"), sshKey(t, "mallory")
	pub, err := os.ReadFile(aliceKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	file := filepath.Join(t.TempDir(), "web.yml")
	writeFile(t, file, fmt.Sprintf(`name: alice-ns-i
type: computeinstance
size: STANDARD_DS3_v2
ssh_public_access_enabled: true
ssh_settings:
  ssh_key_value: %[2]s
custom_applications:
  - name: web
    command: python3 -m http.server %[1]d --bind 127.0.0.1
    endpoints:
      - target: %[1]d
`, port, strings.TrimSpace(string(pub))))
	mustRun(t, alice, "compute", "create", "-f", file, "-o", "none")
	writeFile(t, filepath.Join(s.nodesDir, "ci-local-alice-ns-i", "home", "notes.txt"), "alice's private notes\n")
	waitAppsReady(t, alice, "alice-ns-i", "web")
	code, _, body := s.httpDo(t, "GET", "/api/v1/workspaces/default/computes/alice-ns-i/applications/web/notes.txt", tokenOf(alice), nil, nil)
	if code != http.StatusOK || !strings.Contains(string(body), "alice's private notes") {
		t.Fatalf("alice's own application through the proxy: %d %s", code, body)
	}
	if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/notes.txt", port)); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Errorf("alice's listener is on the host's loopback: %d %s", resp.StatusCode, b)
	}

	mustRun(t, mallory, "compute", "create", "--name", "mallory-ns-i", "--type", "ComputeInstance", "--size", "STANDARD_DS3_v2",
		"--ssh-public-access-enabled", "--ssh-key-value", "@"+malloryKey+".pub", "-o", "none")
	v := showInstance(t, mallory, "mallory-ns-i")
	if v.SSHSettings == nil || v.SSHSettings.SSHPort == 0 {
		t.Fatalf("mallory's instance has no SSH port: %s", v)
	}
	out, errOut, rc := sshRun(t, malloryKey, v.SSHSettings.SSHPort, fmt.Sprintf(`python3 - <<'PY'
import os, urllib.request, urllib.error
def get(url):
    try:
        return "answered %%s" %% urllib.request.urlopen(url, timeout=10).read().decode()
    except urllib.error.HTTPError as e:
        return "answered HTTP %%d" %% e.code
    except Exception as e:
        return "refused (%%s)" %% e
print("alice:", get("http://127.0.0.1:%d/notes.txt"))
print("server:", get(os.environ["AZUREML_DEV_URL_MFE"] + "api/v1/workspaces"))
PY`, port))
	if rc != 0 {
		t.Fatalf("mallory's ssh: exit %d, stdout %q, stderr %q", rc, out, errOut)
	}
	if strings.Contains(out, "private notes") || !strings.Contains(out, "alice: refused") {
		t.Errorf("mallory's instance shell reached alice's listener:\n%s", out)
	}
	if !strings.Contains(out, "server: answered") {
		t.Errorf("mallory's instance shell did not reach the server at its advertised URL:\n%s", out)
	}

	// alice's ssh -L reaches her application inside her instance.
	av := showInstance(t, alice, "alice-ns-i")
	lport := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fwd := exec.CommandContext(ctx, "ssh", append(sshOpts(t, aliceKey), "-N", "-o", "ExitOnForwardFailure=yes",
		"-L", fmt.Sprintf("%d:localhost:%d", lport, port), "-p", strconv.Itoa(av.SSHSettings.SSHPort), "azureuser@127.0.0.1")...)
	if err := fwd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fwd.Process.Kill(); _ = fwd.Wait() }()
	waitFor(t, 30*time.Second, "alice's forwarded port to answer", func() (bool, string) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/notes.txt", lport))
		if err != nil {
			return false, err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return strings.Contains(string(b), "private notes"), string(b)
	})
}
