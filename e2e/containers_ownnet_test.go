package e2e_test

import (
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A single-node job in a container, on a compute without a virtual
// network, has a network namespace of its own: the application proxy's
// origin (the server's other port on 127.0.0.1) and another process's
// listener on the host's loopback are out of its reach; the server
// answers at its advertised URL, relayed onto the job's own loopback.
func testContainerOwnNetwork(t *testing.T, f *ctrFixture) {
	s := f.s
	m := regexp.MustCompile(`apps_url=(http://\S+)`).FindStringSubmatch(s.log())
	if m == nil {
		t.Fatalf("the server's log names no apps_url:\n%s", s.logTail())
	}
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	go http.Serve(other, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "another user's secret") }))
	createCluster(t, s, "ctr-ownnet", "--size", "Standard_DS3_v2", "--max-instances", "1", "--idle-time-before-scale-down", "120")
	job := writeJobFile(t, fmt.Sprintf(`command: |
  python3 - <<'PY'
  import os, urllib.request, urllib.error
  def get(url):
      try:
          return "answered %%s" %% urllib.request.urlopen(url, timeout=10).read().decode()
      except urllib.error.HTTPError as e:
          return "answered HTTP %%d" %% e.code
      except Exception as e:
          return "refused (%%s)" %% e
  print("server:", get(os.environ["AZUREML_DEV_URL_MFE"] + "api/v1/workspaces"))
  print("apps:", get("%s/"))
  print("other:", get("http://127.0.0.1:%d/"))
  PY
compute: azureml:ctr-ownnet
environment:
  image: %s
`, m[1], other.Addr().(*net.TCPAddr).Port, f.image))
	name := submitJob(t, s, job)
	j := waitJob(t, s, name, 3*time.Minute, "Completed", "Failed")
	log := jobLog(t, s, name)
	if j.Status != "Completed" || !strings.Contains(log, "server: answered") || !strings.Contains(log, "apps: refused") ||
		!strings.Contains(log, "other: refused") || strings.Contains(log, "secret") {
		t.Fatalf("%v: want the server answered and the host's loopback refused:\n%s", j, log)
	}
	waitNoContainers(t, f, currentAttempt(t, s, name).Ranks[0].NodeID)
}
