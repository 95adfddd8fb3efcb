package e2e_test

import (
	"fmt"

	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// Issue 35's attack: alice's host-process instance serves her home on
// 127.0.0.1:PORT (python3 -m http.server); mallory's job, a host
// process on another node of the same host, reads
// http://127.0.0.1:PORT/notes.txt. As root (as CI runs it) a
// single-node job has a network namespace of its own: the host's
// loopback, and alice's listener on it, are out of its reach, while the
// server (forwarded onto the job's own loopback) still answers it, and
// alice still reaches her application through the proxy.
func TestJobCannotReachAnotherUsersLoopbackListener(t *testing.T) {
	t.Parallel()
	testenv.Root(t, "work shares the host's network unless the agent runs as root")
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	users := withUsers(t, s, map[string]string{"alice": "Contributor", "mallory": "Contributor"})
	alice, mallory := users["alice"], users["mallory"]
	t.Cleanup(func() {
		run(t, s.env, "compute", "delete", "-n", "alice-web-i", "--yes", "-o", "none")
		run(t, s.env, "compute", "delete", "-n", "cpu-cluster", "--yes", "-o", "none")
		waitFor(t, time.Minute, "the agents to go", func() (bool, string) {
			left := agentProcs(s.nodesDir)
			return len(left) == 0, fmt.Sprint(left)
		})
	})
	port := freePort(t)
	file := filepath.Join(t.TempDir(), "web.yml")
	writeFile(t, file, fmt.Sprintf(`name: alice-web-i
type: computeinstance
size: STANDARD_DS3_v2
custom_applications:
  - name: web
    command: python3 -m http.server %[1]d --bind 127.0.0.1
    endpoints:
      - target: %[1]d
`, port))
	mustRun(t, alice, "compute", "create", "-f", file, "-o", "none")
	writeFile(t, filepath.Join(s.nodesDir, "ci-local-alice-web-i", "home", "notes.txt"), "alice's private notes\n")
	v := waitAppsReady(t, alice, "alice-web-i", "web")
	// Applications are served on an origin of their own (another port of
	// the server's host): not the server's advertised URL, so not
	// forwarded to the job.
	appsURL := ""
	for _, a := range v.Applications {
		if a.Name == "web" {
			appsURL = strings.TrimSuffix(a.URI, "/api/v1/workspaces/default/computes/alice-web-i/applications/web/")
		}
	}
	if appsURL == "" || appsURL == s.url {
		t.Fatalf("no origin of its own for applications: %s", v)
	}
	code, _, body := s.httpDo(t, "GET", "/api/v1/workspaces/default/computes/alice-web-i/applications/web/notes.txt", tokenOf(alice), nil, nil)
	if code != http.StatusOK || !strings.Contains(string(body), "alice's private notes") {
		t.Fatalf("alice's own application through the proxy: %d %s", code, body)
	}

	createCluster(t, s, "cpu-cluster", "--max-instances", "1", "--idle-time-before-scale-down", "120")
	job := writeJobFile(t, fmt.Sprintf(`type: command
command: |
  python3 - <<'PY'
  import os, urllib.request, urllib.error
  def get(url):
      try:
          return "answered %%s" %% urllib.request.urlopen(url, timeout=10).read().decode()
      except urllib.error.HTTPError as e:
          return "answered HTTP %%d" %% e.code
      except Exception as e:
          return "refused (%%s)" %% e
  print("alice:", get("http://127.0.0.1:%[1]d/notes.txt"))
  print("server:", get(os.environ["AZUREML_DEV_URL_MFE"] + "api/v1/workspaces"))
  print("apps:", get("%[2]s/"))
  PY
compute: azureml:cpu-cluster
`, port, appsURL))
	j := runJSON[jobView](t, mallory, "job", "create", "-f", job, "-o", "json")
	waitJob(t, s, j.Name, 2*time.Minute, "Completed")
	log := jobLog(t, s, j.Name)
	if strings.Contains(log, "private notes") || !strings.Contains(log, "alice: refused") {
		t.Errorf("mallory's job reached alice's listener on the host's loopback:\n%s", log)
	}
	if !strings.Contains(log, "apps: refused") {
		t.Errorf("mallory's job reached the application proxy's port on the host's loopback:\n%s", log)
	}
	if !strings.Contains(log, "server: answered") {
		t.Errorf("mallory's job did not reach the server at its advertised URL:\n%s", log)
	}
}
