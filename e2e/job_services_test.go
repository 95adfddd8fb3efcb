package e2e_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// jobServicesView is a job's services as `shoal job show -o json` prints
// them.
type jobServicesView struct {
	Status   string `json:"status"`
	Services map[string]struct {
		Type         string `json:"type"`
		Status       string `json:"status"`
		Endpoint     string `json:"endpoint"`
		ErrorMessage string `json:"error_message"`
	} `json:"services"`
}

// A running job's services: the job's own web server on a custom port
// and Jupyter (Debian's Notebook server: Debian has no JupyterLab) are
// reached through the application proxy by the job's submitter only —
// another member and an administrator get 403 — and not after the job
// ends; a tensor_board service whose program the environment lacks says
// Failed with why while the job runs on; a custom service on a port where
// another process listens (standing for another user's or the server's)
// is refused at dial.
func TestJobServicesThroughTheProxy(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	users := withUsers(t, s, map[string]string{"alice": "Contributor", "bob": "Contributor"})
	alice, bob := users["alice"], users["bob"]
	createCluster(t, s, "svc", "--max-instances", "2", "--idle-time-before-scale-down", "60")
	foreignPort := foreignServer(t)
	webPort := freePort(t)
	// The job's web server answers the headers it got, so that the test
	// sees what of the caller's request reaches the job.
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "server.py"), `import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("served-by-the-job\n" + "".join("%s: %s\n" % kv for kv in self.headers.items())).encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
`)
	file := filepath.Join(src, "job.yml")
	writeFile(t, file, fmt.Sprintf(`type: command
code: .
command: exec python3 server.py %d
compute: azureml:svc
services:
  web:
    type: custom
    port: %d
  notebook:
    type: jupyter_lab
  board:
    type: tensor_board
    log_dir: outputs/tb
  borrowed:
    job_service_type: Custom
    port: %d
`, webPort, webPort, foreignPort))
	name := runJSON[jobView](t, alice, "job", "create", "-f", file, "-o", "json").Name
	var v jobServicesView
	waitFor(t, 90*time.Second, "the job's web and notebook services to run", func() (bool, string) {
		v = runJSON[jobServicesView](t, alice, "job", "show", "-n", name, "-o", "json")
		return v.Services["web"].Status == "Running" && v.Services["notebook"].Status == "Running" && v.Services["board"].Status == "Failed", fmt.Sprintf("%+v", v)
	})
	if e := v.Services["board"].ErrorMessage; !strings.Contains(e, "no tensorboard on its PATH: add tensorboard to the environment") {
		t.Errorf("the missing tensorboard says %q; want the sentence naming it", e)
	}
	if v.Status != "Running" {
		t.Errorf("the job with a failed service is %s; want Running", v.Status)
	}
	table := mustRun(t, alice, "job", "show", "-n", name, "-o", "table")
	for _, want := range []string{"Endpoint", v.Services["web"].Endpoint, "no tensorboard", "tensor_board"} {
		if !strings.Contains(table, want) {
			t.Errorf("job show's table lacks %q:\n%s", want, table)
		}
	}
	web := v.Services["web"].Endpoint
	path := urlPath(t, web)
	if !strings.HasPrefix(path, "/api/v1/workspaces/default/jobs/"+name+"/nodes/0/applications/web/") {
		t.Fatalf("the web service's endpoint: %q", web)
	}
	code, _, body := s.httpDo(t, "GET", path+"index.html", tokenOf(alice), nil, map[string]string{"Cookie": "shoal_session=secret-session; theme=dark"})
	if code != http.StatusOK || !strings.Contains(string(body), "served-by-the-job") {
		t.Errorf("the submitter through the proxy: %d %s", code, body)
	}
	if strings.Contains(string(body), tokenOf(alice)) || strings.Contains(string(body), "secret-session") || strings.Contains(strings.ToLower(string(body)), "authorization") {
		t.Errorf("the caller's credential reached the job's application:\n%s", body)
	}
	for who, tok := range map[string]string{"another member": tokenOf(bob), "an administrator": s.adminToken(t)} {
		if code, _, body := s.httpDo(t, "GET", path+"index.html", tok, nil, nil); code != http.StatusForbidden || strings.Contains(string(body), "served-by-the-job") {
			t.Errorf("%s through the proxy: %d %s; want 403", who, code, body)
		}
	}
	nb := urlPath(t, v.Services["notebook"].Endpoint)
	if code, _, body := s.httpDo(t, "GET", nb+"api/status", tokenOf(alice), nil, nil); code != http.StatusOK || !strings.Contains(string(body), "started") {
		t.Errorf("the job's Jupyter through the proxy: %d %s", code, body)
	}
	// A kernel of the job's Jupyter runs in the job: its environment and
	// folder, over the proxy's WebSocket on the applications' origin.
	code, _, body = s.httpDo(t, "POST", nb+"api/kernels", tokenOf(alice), []byte(`{"name":"python3"}`), map[string]string{"Content-Type": "application/json"})
	var k struct{ ID string }
	if code != http.StatusCreated || json.Unmarshal(body, &k) != nil || k.ID == "" {
		t.Fatalf("starting a kernel of the job's Jupyter: %d %s", code, body)
	}
	ep, _ := url.Parse(v.Services["notebook"].Endpoint)
	got := runKernel(t, &server{addr: ep.Host}, tokenOf(alice), nb+"api/kernels/"+k.ID+"/channels",
		"(__import__('os').environ['SHOAL_JOB_NAME'], __import__('os').getcwd().rsplit('/', 1)[-1])")
	if got != fmt.Sprintf("('%s', 'code')", name) {
		t.Errorf("the kernel's job and folder: %s", got)
	}
	borrowed := strings.Replace(path, "/applications/web/", "/applications/borrowed/", 1)
	code, _, body = s.httpDo(t, "GET", borrowed, tokenOf(alice), nil, nil)
	if code == http.StatusOK || strings.Contains(string(body), "secret") {
		t.Errorf("a service on another process's port: %d %s", code, body)
	}
	if os.Geteuid() != 0 && (code != http.StatusForbidden || !strings.Contains(string(body), "not the job's rank's")) {
		t.Errorf("a service on another process's port: %d %s; want 403 naming the rule", code, body)
	}
	mustRun(t, alice, "job", "cancel", "-n", name)
	waitJob(t, s, name, 60*time.Second, "Canceled")
	if code, _, body := s.httpDo(t, "GET", path+"index.html", tokenOf(alice), nil, nil); code < 400 || strings.Contains(string(body), "served-by-the-job") {
		t.Errorf("the service after the job ended: %d %s", code, body)
	}
	v = runJSON[jobServicesView](t, alice, "job", "show", "-n", name, "-o", "json")
	if st := v.Services["web"]; st.Status != "Stopped" || st.Endpoint != "" {
		t.Errorf("the web service after the job ended: %+v", st)
	}
}

// urlPath is the path of an absolute URL.
func urlPath(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		t.Fatalf("not an absolute URL: %q", u)
	}
	return p.Path
}

// A two-node job runs on the host's network (single-node jobs get a
// network of their own): a service with nodes: all is served on each
// node at its own endpoint, and one whose port another process holds
// (the test's own server, standing for another user's job or the Shoal
// server) is refused at dial on every node, naming the rule, while the
// job's own listener on the first node is served.
func TestJobServicesOnEveryNodeRefuseAnotherProcesssPort(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	alice := withUsers(t, s, map[string]string{"alice": "Contributor"})["alice"]
	createCluster(t, s, "svc2", "--max-instances", "2", "--idle-time-before-scale-down", "60")
	foreignPort := foreignServer(t)
	webPort := freePort(t)
	file := writeJobFile(t, fmt.Sprintf(`type: command
command: if [ "$SHOAL_NODE_RANK" = 0 ]; then echo own > index.html; exec python3 -m http.server %[1]d --bind 127.0.0.1; else exec sleep 600; fi
compute: azureml:svc2
resources:
  instance_count: 2
services:
  web:
    type: custom
    port: %[1]d
  borrowed:
    type: custom
    port: %[2]d
    nodes: all
`, webPort, foreignPort))
	name := runJSON[jobView](t, alice, "job", "create", "-f", file, "-o", "json").Name
	var v nodeServicesView
	waitFor(t, 90*time.Second, "the services to listen on both nodes", func() (bool, string) {
		v = runJSON[nodeServicesView](t, alice, "job", "show", "-n", name, "-o", "json")
		b := v.Services["borrowed"].Instances
		w := v.Services["web"].Instances
		return len(b) == 2 && b[0].Status == "Running" && b[1].Status == "Running" && len(w) == 1 && w[0].Status == "Running", fmt.Sprintf("%+v", v)
	})
	for i, in := range v.Services["borrowed"].Instances {
		if in.NodeIndex != i || !strings.Contains(in.Endpoint, fmt.Sprintf("/nodes/%d/applications/borrowed/", i)) {
			t.Errorf("borrowed on node %d: %+v", i, in)
		}
		code, _, body := s.httpDo(t, "GET", urlPath(t, in.Endpoint), tokenOf(alice), nil, nil)
		if code != http.StatusForbidden || strings.Contains(string(body), "secret") || !strings.Contains(string(body), fmt.Sprintf("port %d", foreignPort)) ||
			!strings.Contains(string(body), "reaches only applications the job's rank itself runs") {
			t.Errorf("a service on another process's port, node %d: %d %s; want 403 naming the port and the rule", i, code, body)
		}
	}
	if code, _, body := s.httpDo(t, "GET", urlPath(t, v.Services["web"].Instances[0].Endpoint)+"index.html", tokenOf(alice), nil, nil); code != http.StatusOK || strings.TrimSpace(string(body)) != "own" {
		t.Errorf("the job's own listener: %d %s", code, body)
	}
	// Node 1 does not serve the first node's service.
	p := strings.Replace(urlPath(t, v.Services["web"].Instances[0].Endpoint), "/nodes/0/", "/nodes/1/", 1)
	if code, _, body := s.httpDo(t, "GET", p, tokenOf(alice), nil, nil); code != http.StatusNotFound {
		t.Errorf("the first node's service on node 1: %d %s; want 404", code, body)
	}
	mustRun(t, alice, "job", "cancel", "-n", name)
}

// nodeServicesView is a job's services on each node, as `shoal job show
// -o json` prints them.
type nodeServicesView struct {
	Services map[string]struct {
		Instances []struct {
			NodeIndex    int    `json:"node_index"`
			Status       string `json:"status"`
			Endpoint     string `json:"endpoint"`
			ErrorMessage string `json:"error_message"`
		} `json:"instances"`
	} `json:"services"`
}

// Azure's own Python SDK reads a running job's services:
// jobs.show_services(name, 0) (run history's serviceinstances) answers
// each service's type, port, status, the proxy's endpoint and a failed
// one's error, node 1 has none of a single-node job's, and jobs.get
// answers them among Azure's Studio and Tracking.
func TestAzurePythonSDKShowServices(t *testing.T) {
	t.Parallel()
	testenv.AzureML(t)
	s := startServer(t, serverOpts{Config: fastJobsConfig, Args: []string{"--tls"}, TLS: true})
	sp := runJSON[map[string]any](t, s.env, "sp", "create", "--name", "sdk-services", "-o", "json")
	mustRun(t, s.env, "role", "assign", "--sp", "sdk-services", "--role", "Reader", "-o", "none")
	createCluster(t, s, "sdk-svc", "--max-instances", "1")
	port := freePort(t)
	name := submitJob(t, s, writeJobFile(t, fmt.Sprintf(`type: command
command: exec python3 -m http.server %[1]d --bind 127.0.0.1
compute: azureml:sdk-svc
services:
  web:
    type: custom
    port: %[1]d
  board:
    type: tensor_board
`, port)))
	waitFor(t, 90*time.Second, "the job's services", func() (bool, string) {
		v := runJSON[jobServicesView](t, s.env, "job", "show", "-n", name, "-o", "json")
		return v.Services["web"].Status == "Running" && v.Services["board"].Status == "Failed", fmt.Sprintf("%+v", v)
	})
	out, steps := runAzurePy(t, s, pyRun{script: "services.py", sp: sp, env: []string{"JOB=" + name}})
	shown, _ := steps["show"]["services"].(map[string]any)
	web, _ := shown["web"].(map[string]any)
	board, _ := shown["board"].(map[string]any)
	if jsonStr(web["type"]) != "Custom" || jsonStr(web["status"]) != "Running" || fmt.Sprint(web["port"]) != fmt.Sprint(port) ||
		!strings.HasSuffix(jsonStr(web["endpoint"]), "/jobs/"+name+"/nodes/0/applications/web/") {
		t.Errorf("show_services' web: %v\n%s", web, out)
	}
	if jsonStr(board["status"]) != "Failed" || !strings.Contains(jsonStr(board["error"]), "no tensorboard") {
		t.Errorf("show_services' board: %v\n%s", board, out)
	}
	if got := fmt.Sprint(steps["node1"]["services"]); got != "[]" {
		t.Errorf("show_services on node 1: %s\n%s", got, out)
	}
	got, _ := steps["get"]["services"].(map[string]any)
	gweb, _ := got["web"].(map[string]any)
	if jsonStr(gweb["type"]) != "custom" || jsonStr(gweb["status"]) != "Running" || got["Studio"] == nil {
		t.Errorf("jobs.get's services: %v\n%s", got, out)
	}
	mustRun(t, s.env, "job", "cancel", "-n", name)
}

// A running job's ssh service: `shoal job connect-ssh` opens a session
// with the user's OpenSSH client and the host key pinned, running as the
// job's account in its folder and environment; a key the service does
// not list is refused; the proxy does not carry it; and once the job
// ended, connect-ssh says so and the port no longer answers.
func TestJobSSHService(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	alice := withUsers(t, s, map[string]string{"alice": "Contributor"})["alice"]
	createCluster(t, s, "sshjob", "--max-instances", "1", "--idle-time-before-scale-down", "60")
	key, other := sshKey(t, "alice"), sshKey(t, "stranger")
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	// A jupyter-lab on the job's PATH that exits at once.
	bin, err := os.MkdirTemp("", "shoal-fake-jupyter-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "jupyter-lab"), []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := writeJobFile(t, fmt.Sprintf(`type: command
command: echo started; sleep 600
compute: azureml:sshjob
environment_variables:
  PATH: %s:/usr/local/bin:/usr/bin:/bin
services:
  shell:
    type: ssh
    ssh_public_keys: %s
  lab:
    type: jupyter_lab
`, bin, strings.TrimSpace(string(pub))))
	name := runJSON[jobView](t, alice, "job", "create", "-f", file, "-o", "json").Name
	var v nodeServicesView
	waitFor(t, 90*time.Second, "the ssh service", func() (bool, string) {
		v = runJSON[nodeServicesView](t, alice, "job", "show", "-n", name, "-o", "json")
		in, lab := v.Services["shell"].Instances, v.Services["lab"].Instances
		return len(in) == 1 && in[0].Status == "Running" && len(lab) == 1 && lab[0].Status == "Failed", fmt.Sprintf("%+v", v)
	})
	if e := v.Services["lab"].Instances[0].ErrorMessage; !strings.Contains(e, "Jupyter Lab exited while the job runs (exit status 3)") {
		t.Errorf("a Jupyter that exits at once: %q", e)
	}
	ep := v.Services["shell"].Instances[0].Endpoint
	u, err := url.Parse(ep)
	if err != nil || u.Scheme != "ssh" || u.User.Username() != "azureuser" {
		t.Fatalf("the ssh service's endpoint: %q", ep)
	}
	port, _ := strconv.Atoi(u.Port())
	stdout, stderr, code := runStdin(t, alice, "echo via-connect-ssh job=$SHOAL_JOB_NAME; id -u; pwd\n",
		append([]string{"job", "connect-ssh", "-n", name, "--private-key-file-path", key, "--", "-T"}, sshOpts(t, key)[:10]...)...)
	if code != 0 || !strings.Contains(stdout, "via-connect-ssh job="+name) || !strings.Contains(stdout, "/code") {
		t.Fatalf("connect-ssh: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if os.Geteuid() == 0 && strings.Contains(stdout, "\n0\n") {
		t.Errorf("an ssh session into a job ran as root:\n%s", stdout)
	}
	if _, errOut, code := runSSH(t, other, port, "azureuser", "true"); code == 0 || !strings.Contains(errOut, "Permission denied") {
		t.Errorf("a key the service does not list logged in: exit %d, %s", code, errOut)
	}
	p := fmt.Sprintf("/api/v1/workspaces/default/jobs/%s/nodes/0/applications/shell/", name)
	if code, _, body := s.httpDo(t, "GET", p, tokenOf(alice), nil, nil); code != http.StatusNotFound || !strings.Contains(string(body), "connect-ssh") {
		t.Errorf("the ssh service through the proxy: %d %s; want 404 pointing at connect-ssh", code, body)
	}
	mustRun(t, alice, "job", "cancel", "-n", name)
	waitJob(t, s, name, 60*time.Second, "Canceled")
	if _, errOut, code := runSSH(t, key, port, "azureuser", "true"); code == 0 {
		t.Errorf("the job's SSH server answers after the job ended: %s", errOut)
	}
	if errOut, _ := mustFail(t, alice, "job", "connect-ssh", "-n", name); !strings.Contains(errOut, "reachable while the job runs") {
		t.Errorf("connect-ssh after the job ended: %s", errOut)
	}
}

// foreignServer serves "another user's secret" on a port of the loopback
// (a process that is neither an instance's nor a job's, standing for
// another user's or the server's) until the test ends, and returns the
// port.
func foreignServer(t *testing.T) int {
	t.Helper()
	foreign, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go http.Serve(foreign, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "another user's secret")
	}))
	t.Cleanup(func() { foreign.Close() })
	return foreign.Addr().(*net.TCPAddr).Port
}
