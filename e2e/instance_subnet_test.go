package e2e_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testctr"
)

// subnetInstance is an instance document in virtual network ml-vnet,
// subnet subnet, with no public IP. Its creation script writes its
// address to addr.txt and a page for its application; with an app port,
// an application from an image serves that page on every address of the
// instance's network.
func subnetInstance(name, subnet, registry string, appPort int, extra string) string {
	doc := fmt.Sprintf(`name: %s
type: computeinstance
size: STANDARD_DS3_v2
network_settings:
  vnet_name: ml-vnet
  subnet: %s
enable_node_public_ip: false
setup_scripts:
  creation_script:
    command: hostname -I > addr.txt; mkdir -p cloudfiles; echo page of %s > cloudfiles/index.html
`, name, subnet, name)
	if appPort > 0 {
		doc += fmt.Sprintf(`custom_applications:
  - name: web
    type: docker
    image:
      type: docker
      reference: %s/%s
    command: python3 -m http.server %d --bind 0.0.0.0 --directory /srv
    endpoints:
      - name: connect
        target: %d
        published: %d
        protocol: http
    bind_mounts:
      - source: /home/azureuser/cloudfiles
        target: /srv
        read_only: true
`, registry, testctr.PushedBase, appPort, appPort, appPort)
	}
	return doc + extra
}

// Compute instances in a virtual network, end to end (seed 002's
// "inside an Azure Virtual Network" with "No public IP"): each runs in a
// container on its subnet's network. From an SSH session in one, and
// from a job on it, the application of an instance in the same subnet
// answers, and neither the host's loopback, the host's address nor an
// instance of another subnet does. Its notebook and its neighbour's
// application answer through the server's proxy for their user only,
// although they listen on the loopback of a network namespace that is
// not the host's.
func TestInstancesInASubnet(t *testing.T) {
	t.Parallel() // its leak check counts its own agents' containers
	env := testctr.Shared(t)
	image := testctr.InstanceImage(t)
	s := startServer(t, serverOpts{Config: instanceContainersConfig(image),
		Env: []string{"SHOAL_AGENT_CONTAINER_HOST=" + env.Host, "SHOAL_AGENT_INSECURE_REGISTRIES=" + env.Registry.Addr}})
	users := withUsers(t, s, map[string]string{"alice": "Contributor", "bob": "Contributor"})
	alice, bob := users["alice"], users["bob"]
	home := func(name string) string { return filepath.Join(s.nodesDir, "ci-local-"+name, "home") }

	appPort := freePort(t)
	key := sshKey(t, "k")
	sshDoc := fmt.Sprintf("ssh_public_access_enabled: true\nssh_settings:\n  ssh_key_value: %s\n", strings.TrimSpace(readFileT(t, key+".pub")))
	docs := map[string]string{
		// peer-ci has an identity: its endpoint answers on the loopback
		// of its container's network, although no route leads off it.
		"peer-ci": subnetInstance("peer-ci", "train-a", env.Registry.Addr, appPort, sshDoc+"identity:\n  type: system_assigned\n"),
		"far-ci":  subnetInstance("far-ci", "train-b", env.Registry.Addr, appPort, ""),
		"net-ci":  subnetInstance("net-ci", "train-a", env.Registry.Addr, 0, sshDoc),
	}
	for _, name := range []string{"peer-ci", "far-ci", "net-ci"} {
		f := filepath.Join(t.TempDir(), name+".yml")
		writeFile(t, f, docs[name])
		mustRun(t, alice, "compute", "create", "-f", f, "-o", "none")
	}
	addrOf := map[string]string{}
	for _, name := range []string{"peer-ci", "far-ci", "net-ci"} {
		waitInstanceState(t, alice, name, 3*time.Minute, "Running")
		if got := showIsolation(t, alice, name); got != "container" {
			t.Errorf("%s: compute show's isolation = %q, want container", name, got)
		}
		addr := strings.Fields(readHomeFile(t, home(name), "addr.txt"))
		if len(addr) == 0 {
			t.Fatalf("%s wrote no address", name)
		}
		addrOf[name] = addr[0]
	}
	waitAppsReady(t, alice, "peer-ci", "web")
	waitAppsReady(t, alice, "far-ci", "web")

	// The host listens on its loopback and on every address.
	loop, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer loop.Close()
	all, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	hostAddr := fmt.Sprintf("%s:%d", hostIPv4(t), all.Addr().(*net.TCPAddr).Port)
	peer := fmt.Sprintf("%s:%d", addrOf["peer-ci"], appPort)
	far := fmt.Sprintf("%s:%d", addrOf["far-ci"], appPort)
	targets := strings.Join([]string{peer, far, loop.Addr().String(), hostAddr}, " ")
	want := []string{"reached " + peer, "unreachable " + far, "unreachable " + loop.Addr().String(), "unreachable " + hostAddr}

	// The probe goes into net-ci's home, where its session finds it.
	probe := filepath.Join(home("net-ci"), "probe.py")
	if err := os.WriteFile(probe, []byte(subnetProbe), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("ssh session in the subnet", func(t *testing.T) {
		v := showInstance(t, alice, "net-ci")
		out, errOut, code := sshRun(t, key, v.SSHSettings.SSHPort, "hostname -I; python3 probe.py probe "+targets)
		if code != 0 {
			t.Fatalf("ssh: exit %d, %q, %s", code, out, errOut)
		}
		if !strings.HasPrefix(out, addrOf["net-ci"]) {
			t.Errorf("the session's addresses %q are not the instance's (%s): it does not run in the container", out, addrOf["net-ci"])
		}
		for _, w := range want {
			if !strings.Contains(out, w+"\n") && !strings.Contains(out, w+" ") {
				t.Errorf("the SSH session: want %q in\n%s", w, out)
			}
		}
	})

	t.Run("identity endpoint inside the subnet", func(t *testing.T) {
		v := showInstance(t, alice, "peer-ci")
		out, errOut, code := sshRun(t, key, v.SSHSettings.SSHPort, `python3 -c "
import json, os, urllib.request
q = os.environ['MSI_ENDPOINT'] + '?resource=https://management.azure.com&api-version=2017-09-01'
r = urllib.request.urlopen(urllib.request.Request(q, headers={'Secret': os.environ['MSI_SECRET']}), timeout=20)
print('token', json.load(r)['access_token'][:2])"`)
		if code != 0 || out != "token ey\n" {
			t.Fatalf("the identity endpoint from peer-ci's shell: exit %d, %q, %s", code, out, errOut)
		}
	})

	t.Run("job on the instance in the subnet", func(t *testing.T) {
		code := writeFiles(t, map[string]string{"probe.py": subnetProbe})
		file := writeJobFile(t, fmt.Sprintf("code: %s\ncommand: python3 probe.py probe %s\ncompute: azureml:net-ci\n", code, targets))
		j := runJSON[jobView](t, alice, "job", "create", "-f", file, "-o", "json")
		if v := waitJob(t, s, j.Name, 3*time.Minute, "Completed", "Failed"); v.Status != "Completed" {
			t.Fatalf("the job on net-ci: %v\n%s", v, jobLog(t, s, j.Name))
		}
		log := jobLog(t, s, j.Name)
		for _, w := range want {
			if !strings.Contains(log, w) {
				t.Errorf("the job on net-ci: want %q in\n%s", w, log)
			}
		}
	})

	t.Run("applications through the proxy", func(t *testing.T) {
		v := waitAppsReady(t, alice, "net-ci", "jupyter")
		apps := appsServer(t, s, v, "jupyter")
		base := "/api/v1/workspaces/default/computes/net-ci/applications/jupyter/"
		if code, _, body := apps.httpDo(t, "GET", base+"api/status", tokenOf(alice), nil, nil); code != http.StatusOK {
			t.Errorf("net-ci's Jupyter through the proxy for alice: %d %s", code, body)
		}
		if code, _, body := apps.httpDo(t, "GET", base+"api/status", tokenOf(bob), nil, nil); code != http.StatusForbidden {
			t.Errorf("alice's Jupyter for bob: %d %s, want 403", code, body)
		}
		pv := waitAppsReady(t, alice, "peer-ci", "web")
		web := appsServer(t, s, pv, "web")
		path := "/api/v1/workspaces/default/computes/peer-ci/applications/web/index.html"
		if code, _, body := web.httpDo(t, "GET", path, tokenOf(alice), nil, nil); code != http.StatusOK || string(body) != "page of peer-ci\n" {
			t.Errorf("peer-ci's application for alice: %d %q", code, body)
		}
		if code, _, body := web.httpDo(t, "GET", path, tokenOf(bob), nil, nil); code != http.StatusForbidden {
			t.Errorf("peer-ci's application for bob: %d %q, want 403", code, body)
		}
	})

	for _, name := range []string{"peer-ci", "far-ci", "net-ci"} {
		mustRun(t, alice, "compute", "delete", "-n", name, "--yes")
	}
	waitFor(t, time.Minute, "the instances to be deleted", func() (bool, string) {
		out := mustRun(t, s.env, "compute", "list", "-o", "tsv")
		return strings.TrimSpace(out) == "", out
	})
	assertNoContainersOf(t, env, s.nodesDir)
}

// readFileT is a file's text; the test fails when it cannot be read.
func readFileT(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
