package e2e_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// An instance's custom application whose target is a port some other
// process listens on (here, the test's own server, standing for another
// user's notebook or the Shoal server) is refused by the proxy; the
// instance's own application is served. As root the instance has a
// network namespace of its own: the other process's port is not even on
// its loopback, so the application never looks ready, and the proxy,
// which looks for it in the instance's namespace, does not reach it
// either.
func TestAppProxyReachesOnlyTheInstancesOwnApplications(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	alice := withUsers(t, s, map[string]string{"alice": "Contributor"})["alice"]
	foreignPort := foreignServer(t)
	ownPort := freePort(t)
	file := filepath.Join(t.TempDir(), "apps.yml")
	writeFile(t, file, fmt.Sprintf(`name: proxy-owner-i
type: computeinstance
size: STANDARD_DS3_v2
custom_applications:
  - name: own
    command: python3 -m http.server %[1]d --bind 127.0.0.1
    endpoints:
      - target: %[1]d
  - name: borrowed
    command: sleep 100000
    endpoints:
      - target: %[2]d
`, ownPort, foreignPort))
	mustRun(t, alice, "compute", "create", "-f", file, "-o", "none")
	base := "/api/v1/workspaces/default/computes/proxy-owner-i/applications/"
	tok := tokenOf(alice)
	if os.Geteuid() == 0 {
		waitAppsReady(t, alice, "proxy-owner-i", "own")
		code, _, body := s.httpDo(t, "GET", base+"borrowed/", tok, nil, nil)
		if code == http.StatusOK || strings.Contains(string(body), "secret") {
			t.Errorf("an application on another process's port on the host's loopback: %d %s", code, body)
		}
		t.Logf("the borrowed application: %d %s", code, body)
	} else {
		// The borrowed one looks ready: something accepts on its port.
		waitAppsReady(t, alice, "proxy-owner-i", "own", "borrowed")
		code, _, body := s.httpDo(t, "GET", base+"borrowed/", tok, nil, nil)
		if code != http.StatusForbidden || strings.Contains(string(body), "secret") ||
			!strings.Contains(string(body), "port "+strconv.Itoa(foreignPort)) || !strings.Contains(string(body), "reaches only applications the instance itself runs") {
			t.Errorf("an application on another process's port: %d %s; want 403 naming the port and the rule", code, body)
		}
	}
	if code, _, body := s.httpDo(t, "GET", base+"own/", tok, nil, nil); code != http.StatusOK {
		t.Errorf("the instance's own application: %d %s", code, body)
	}
	// The server's own port, or SSH's, is refused at creation.
	_, serverPort, _ := net.SplitHostPort(s.addr)
	for _, port := range []string{serverPort, "22"} {
		bad := filepath.Join(t.TempDir(), "bad.yml")
		writeFile(t, bad, fmt.Sprintf(`name: proxy-bad-i
type: computeinstance
size: STANDARD_DS3_v2
custom_applications:
  - name: server
    command: sleep 100000
    endpoints:
      - target: %s
`, port))
		stderr, _ := mustFail(t, alice, "compute", "create", "-f", bad)
		if !strings.Contains(stderr, "custom_applications[0].endpoints[0].target") || !strings.Contains(stderr, "reserved") {
			t.Errorf("an application targeting port %s: %s", port, stderr)
		}
	}
}
