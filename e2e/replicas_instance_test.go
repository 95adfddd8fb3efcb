package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
	"github.com/shoal-ml/shoal/internal/testpg"
)

// A compute instance behind two servers on one PostgreSQL database. Its
// agent syncs with the server that does not lead (advertise_url names
// that one), so what the agent reports — setup done, where Jupyter and
// SSH listen, its activity — reaches the leader's controllers only
// through what the servers share. The instance still reaches Running,
// either server shows the same SSH port and applications, Jupyter and
// SSH answer through either, and idle shutdown (15 idle minutes of 1 s)
// still fires.
func TestReplicaInstance(t *testing.T) {
	t.Parallel()
	testenv.Jupyter(t)
	testenv.OpenSSH(t, "ssh")
	pg := testpg.Start(t)
	url := pg.NewDatabase(t)
	addrA, addrB := freeAddr(t), freeAddr(t)
	// Both servers' local providers name the nodes' work dirs alike (as
	// replicas on one host must): the application proxy of either checks
	// that the listening process is the instance's by that mark.
	cfg := idleMinuteConfig + "store: " + url + "\nleader_lease: 2s\nadvertise_url: http://" + addrB + "\n" +
		"secrets_key_file: " + filepath.Join(t.TempDir(), "workload.key") + "\n"
	a := startServer(t, serverOpts{Config: cfg, Addr: addrA})
	waitFor(t, 10*time.Second, "the first server to lead", func() (bool, string) {
		r := readyz(a)
		return r["role"] == "leader", jsonStr(r["role"])
	})
	b := startServer(t, serverOpts{Config: cfg, Addr: addrB, Args: []string{"--nodes-dir", a.nodesDir}})
	if r := readyz(b); r["role"] != "follower" {
		t.Fatalf("the second server is %v, want a follower", r["role"])
	}
	alice := withUsers(t, a, map[string]string{"alice": "Contributor"})["alice"]
	via := map[string][]string{
		"the leader":   append(slices.Clone(alice), "SHOAL_SERVER="+a.url),
		"the follower": append(slices.Clone(alice), "SHOAL_SERVER="+b.url),
	}
	key := sshKey(t, "alice")
	mustRun(t, via["the leader"], "compute", "create", "--name", "rep-ci", "--type", "computeinstance",
		"--ssh-public-access-enabled", "--ssh-key-value", "@"+key+".pub", "--idle-time-before-shutdown-minutes", "15", "--no-wait", "-o", "none")

	base := "/api/v1/workspaces/default/computes/rep-ci/applications/"
	ports := map[string]int{}
	for _, name := range []string{"the leader", "the follower"} {
		env := via[name]
		v := waitInstanceState(t, env, "rep-ci", 60*time.Second, "Running")
		if v.SSHSettings == nil || v.SSHSettings.SSHPort == 0 || !strings.Contains(v.SSHConnectionString, fmt.Sprintf("-p %d", v.SSHSettings.SSHPort)) {
			t.Fatalf("%s shows %s with SSH %+v, connection %q", name, v, v.SSHSettings, v.SSHConnectionString)
		}
		ports[name] = v.SSHSettings.SSHPort
		if out, errOut, code := sshRun(t, key, v.SSHSettings.SSHPort, "echo via-"+strings.ReplaceAll(name, " ", "-")); code != 0 || !strings.Contains(out, "via-") {
			t.Fatalf("ssh to the port %s shows: exit %d, %q, %s", name, code, out, errOut)
		}
		v = waitAppsReady(t, env, "rep-ci", "jupyter")
		var appsURL string
		for _, app := range v.Applications {
			if app.Name == "jupyter" {
				appsURL = strings.TrimSuffix(app.URI, base+"jupyter/")
			}
		}
		apps := &server{url: appsURL, addr: strings.TrimPrefix(appsURL, "http://")}
		code, _, body := apps.httpDo(t, "GET", base+"jupyter/api/kernels", tokenOf(alice), nil, nil)
		var kernels []any
		if code != http.StatusOK || json.Unmarshal(body, &kernels) != nil {
			t.Fatalf("Jupyter through %s's application proxy (%s): %d %s", name, appsURL, code, body)
		}
	}
	if ports["the leader"] != ports["the follower"] {
		t.Errorf("the servers show different SSH ports: %v", ports)
	}
	// Nobody uses it now: idle shutdown fires 15 idle minutes (15 s)
	// after the last request through the proxies.
	v := waitInstanceState(t, via["the follower"], "rep-ci", 90*time.Second, "Stopped")
	if v.LastOperation == nil || v.LastOperation.Name != "Stop" || v.LastOperation.Trigger != "IdleShutdown" {
		t.Fatalf("rep-ci stopped by %+v, want Stop by IdleShutdown", v.LastOperation)
	}
}
