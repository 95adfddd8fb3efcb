package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// Compute instances end to end: the real binary, agents, OpenSSH and
// Jupyter. alice (Contributor) owns her instance; bob is a workspace Owner
// and must still be refused at its SSH, notebook and proxy.

func TestInstanceSSHFilesAndOwnership(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	users := withUsers(t, s, map[string]string{"alice": "Contributor", "bob": "Owner"})
	alice, bob := users["alice"], users["bob"]
	key, bobKey := sshKey(t, "alice"), sshKey(t, "bob")

	// The seed's flags, `az ml` → `shoal`.
	mustRun(t, alice, "compute", "create", "--name", "dev-alice", "--type", "ComputeInstance", "--size", "STANDARD_DS3_v2",
		"--ssh-public-access-enabled", "--ssh-key-value", "@"+key+".pub", "-o", "none")
	v := showInstance(t, alice, "dev-alice")
	if v.State != "Running" || v.AssignedUser != "alice" || v.SSHSettings == nil || v.SSHSettings.AdminUsername != "azureuser" || v.SSHSettings.SSHPort == 0 {
		t.Fatalf("after create: %s, user %q, ssh %+v", v, v.AssignedUser, v.SSHSettings)
	}
	port := v.SSHSettings.SSHPort
	if want := fmt.Sprintf("ssh azureuser@127.0.0.1 -p %d", port); v.SSHConnectionString != want {
		t.Errorf("connection string %q, want %q", v.SSHConnectionString, want)
	}

	// ssh host cmd, in the instance's home.
	out, errOut, code := sshRun(t, key, port, "pwd; echo kept > notes.txt; echo $SHOAL_INSTANCE; echo dir=$SHOAL_NODE_DIR")
	// The node's work dir marks its processes: what this server's
	// provider ends with the node (another server's "dev-alice" has
	// the same node ID).
	nodeDir := filepath.Join(s.nodesDir, "ci-local-dev-alice")
	if code != 0 || !strings.HasSuffix(strings.Split(out, "\n")[0], "/home") || !strings.Contains(out, "dev-alice") || !strings.Contains(out, "dir="+nodeDir+"\n") {
		t.Fatalf("ssh: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// scp both ways.
	local := filepath.Join(t.TempDir(), "data.csv")
	os.WriteFile(local, []byte("a,b\n1,2\n"), 0o600)
	scp := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		all := append(sshOpts(t, key), append([]string{"-P", strconv.Itoa(port)}, args...)...)
		if out, err := exec.CommandContext(ctx, "scp", all...).CombinedOutput(); err != nil {
			t.Fatalf("scp %v: %v\n%s", args, err, out)
		}
	}
	scp(local, "azureuser@127.0.0.1:~/data.csv")
	back := filepath.Join(t.TempDir(), "back.csv")
	scp("azureuser@127.0.0.1:data.csv", back)
	if b, _ := os.ReadFile(back); string(b) != "a,b\n1,2\n" {
		t.Fatalf("scp round trip: %q", b)
	}
	// ssh -L forwards a port (what VS Code Remote-SSH needs): to the
	// server's health check, as seen from the instance.
	lport := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fwd := exec.CommandContext(ctx, "ssh", append(sshOpts(t, key), "-N", "-o", "ExitOnForwardFailure=yes",
		"-L", fmt.Sprintf("%d:%s", lport, s.addr), "-p", strconv.Itoa(port), "azureuser@127.0.0.1")...)
	if err := fwd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "the forwarded port to answer", func() (bool, string) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", lport))
		if err != nil {
			return false, err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return strings.Contains(string(b), "ok"), string(b)
	})
	fwd.Process.Kill()
	fwd.Wait()
	// connect-ssh runs the user's OpenSSH client with the right port, user and key.
	stdout, stderr, code := runStdin(t, alice, "echo via-connect-ssh; cat notes.txt\n", append([]string{"compute", "connect-ssh", "-n", "dev-alice",
		"--private-key-file-path", key, "--", "-T"}, sshOpts(t, key)[:10]...)...)
	if code != 0 || !strings.Contains(stdout, "via-connect-ssh") || !strings.Contains(stdout, "kept") {
		t.Fatalf("connect-ssh: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// Without a terminal and with no known_hosts of the user's (a fresh
	// HOME): the host key the server knows from the instance's agent is
	// pinned, and checked, not trusted on first use.
	fresh := t.TempDir()
	pinned := append(append([]string(nil), alice...), "XDG_CACHE_HOME="+filepath.Join(fresh, ".cache"))
	connect := []string{"compute", "connect-ssh", "-n", "dev-alice", "--private-key-file-path", key, "--", "-T", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes"}
	if stdout, stderr, code := runStdin(t, pinned, "echo pinned-ok\n", connect...); code != 0 || !strings.Contains(stdout, "pinned-ok") {
		t.Fatalf("connect-ssh without a terminal or known_hosts: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if v := showInstance(t, alice, "dev-alice"); v.SSHSettings.HostKey == "" || !strings.HasPrefix(v.SSHSettings.HostKey, "ssh-") {
		t.Errorf("compute show's ssh_settings.host_key is %q", v.SSHSettings.HostKey)
	}
	// bob, a workspace Owner, is refused at SSH, the key and the notebook.
	if _, errOut, code := sshRun(t, bobKey, port, "true"); code != 255 || !strings.Contains(errOut, "Permission denied") {
		t.Errorf("bob's key at alice's instance: exit %d, %s", code, errOut)
	}
	if stderr, _ := mustFail(t, bob, "compute", "update", "-n", "dev-alice", "--ssh-key-value", "@"+bobKey+".pub"); !strings.Contains(stderr, "only the instance's user (alice)") {
		t.Errorf("bob setting the SSH key: %s", stderr)
	}
	bobToken := tokenOf(bob)
	for _, path := range []string{"/applications/jupyter/api/kernels", "/applications/jupyter/tree"} {
		if code, _, body := s.httpDo(t, "GET", "/api/v1/workspaces/default/computes/dev-alice"+path, bobToken, nil, nil); code != http.StatusForbidden || !strings.Contains(string(body), "belongs to alice") {
			t.Errorf("bob at %s: %d %s", path, code, body)
		}
	}
	if code, _, body := s.httpDo(t, "GET", "/api/v1/workspaces/default/computes/dev-alice/applications/jupyter/api/kernels", "", nil, nil); code != http.StatusUnauthorized {
		t.Errorf("anonymous at the notebook: %d %s", code, body)
	}
	// Interactive sessions are in the audit log: alice's logins, bob's
	// refused attempt.
	waitFor(t, 15*time.Second, "the SSH logins in the audit log", func() (bool, string) {
		recs := runJSON[[]map[string]any](t, s.env, "audit", "list", "-o", "json")
		ok, denied := 0, 0
		for _, r := range recs {
			if jsonStr(r["action"]) != "computes/ssh/action" {
				continue
			}
			switch {
			case jsonStr(r["outcome"]) == "succeeded" && jsonStr(r["principal_id"]) == "user:alice" && strings.Contains(jsonStr(r["detail"]), "SHA256:"):
				ok++
			case jsonStr(r["outcome"]) == "denied":
				denied++
			}
		}
		return ok >= 3 && denied >= 1, fmt.Sprintf("%d logins by alice, %d refused", ok, denied)
	})
	// Only alice may postpone its idle shutdown.
	if stderr, _ := mustFail(t, bob, "compute", "postpone-shutdown", "-n", "dev-alice"); !strings.Contains(stderr, "belongs to alice") {
		t.Errorf("bob postponing alice's shutdown: %s", stderr)
	}
	pp := runJSON[map[string]any](t, alice, "compute", "postpone-shutdown", "-n", "dev-alice", "--minutes", "30", "-o", "json")
	if idle, _ := pp["idle_state"].(map[string]any); idle == nil || jsonStr(idle["shutdown_postponed_until"]) == "" {
		t.Errorf("postpone-shutdown: idle_state %v", pp["idle_state"])
	}
	// ... but may stop it, as Azure lets an Owner.
	mustRun(t, bob, "compute", "stop", "-n", "dev-alice", "-o", "none")
	v = showInstance(t, alice, "dev-alice")
	if v.State != "Stopped" || v.LastOperation.Name != "Stop" || v.LastOperation.Trigger != "User" || v.LastOperation.Status != "Succeeded" {
		t.Fatalf("after stop: %s", v)
	}
	if procs := agentProcs(s.nodesDir); len(procs) != 0 {
		t.Errorf("agents still running after stop: %v", procs)
	}
	if left := procsWithEnv("SHOAL_NODE_DIR=" + nodeDir); len(left) != 0 {
		t.Errorf("processes of the stopped instance still running: %v", left)
	}
	if _, _, code := sshRun(t, key, port, "true"); code == 0 {
		t.Error("SSH answers on a stopped instance")
	}
	// Started again: the files, the port and the host key are the same.
	mustRun(t, alice, "compute", "start", "-n", "dev-alice", "-o", "none")
	v = showInstance(t, alice, "dev-alice")
	if v.State != "Running" || v.SSHSettings.SSHPort != port {
		t.Fatalf("after start: %s, port %d (was %d)", v, v.SSHSettings.SSHPort, port)
	}
	// StrictHostKeyChecking=accept-new refuses a changed host key.
	if out, errOut, code := sshRun(t, key, port, "cat notes.txt data.csv"); code != 0 || out != "kept\na,b\n1,2\n" {
		t.Fatalf("after stop and start: exit %d, %q, %s", code, out, errOut)
	}
	mustRun(t, alice, "compute", "restart", "-n", "dev-alice", "-o", "none")
	if v = showInstance(t, alice, "dev-alice"); v.State != "Running" || v.LastOperation.Name != "Restart" {
		t.Fatalf("after restart: %s", v)
	}

	// Delete removes the home and every process.
	mustRun(t, bob, "compute", "delete", "-n", "dev-alice", "--yes")
	waitFor(t, 20*time.Second, "the instance to be gone", func() (bool, string) {
		_, _, code := run(t, alice, "compute", "show", "-n", "dev-alice")
		return code != 0, "still there"
	})
	if _, err := os.Stat(filepath.Join(s.nodesDir, "ci-local-dev-alice")); !os.IsNotExist(err) {
		t.Errorf("the instance's home is still there after delete (%v)", err)
	}
	if left := procsWithEnv("SHOAL_NODE_DIR=" + nodeDir); len(left) != 0 {
		t.Errorf("processes of the deleted instance: %v", left)
	}
	// Nothing of it was an internal error (a delete once logged
	// `level=ERROR msg="internal error" ... context canceled`).
	assertNoServerErrors(t, s)
}

// assertNoServerErrors fails when the server's log has an error line.
func assertNoServerErrors(t *testing.T, s *server) {
	t.Helper()
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "level=ERROR") {
			t.Errorf("the server logged an error: %s", l)
		}
	}
}

// tokenOf returns the SHOAL_TOKEN of a CLI environment.
func tokenOf(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "SHOAL_TOKEN="); ok {
			return v
		}
	}
	return ""
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// procsWithEnv lists the live processes whose environment holds kv.
func procsWithEnv(kv string) []procInfo {
	var out []procInfo
	for _, p := range allProcs() {
		name, value, _ := strings.Cut(kv, "=")
		if v, ok := p.envValue(name); ok && v == value {
			out = append(out, p)
		}
	}
	return out
}

func TestInstanceWithoutSSH(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	key := sshKey(t, "k")
	mustRun(t, s.env, "compute", "create", "-f", instanceFile(t, "basic-example-i.yml"), "-o", "none")
	v := showInstance(t, s.env, "basic-example-i")
	if v.SSHPublicAccessEnabled == nil || *v.SSHPublicAccessEnabled || v.SSHConnectionString != "" {
		t.Fatalf("SSH is on by default: %+v", v)
	}
	stderr, _ := mustFail(t, s.env, "compute", "update", "-n", "basic-example-i", "--ssh-key-value", "@"+key+".pub")
	if !strings.Contains(stderr, "ssh_public_access_enabled") || !strings.Contains(stderr, "cannot be enabled after creation") {
		t.Errorf("setting a key without SSH: %s", stderr)
	}
	enabled := instanceVariant(t, "basic-example-i.yml", "size: STANDARD_DS3_v2", "size: STANDARD_DS3_v2\nssh_public_access_enabled: true")
	stderr, _ = mustFail(t, s.env, "compute", "create", "-f", enabled)
	if !strings.Contains(stderr, "cannot change after creation: ssh_public_access_enabled") {
		t.Errorf("switching SSH on: %s", stderr)
	}
	stderr, _ = mustFail(t, s.env, "compute", "connect-ssh", "-n", "basic-example-i")
	if !strings.Contains(stderr, "SSH is disabled") {
		t.Errorf("connect-ssh without SSH: %s", stderr)
	}
	// Instance names are unique across the location, whatever the workspace.
	createWorkspaces(t, s.env, "other-ws")
	stderr, _ = mustFail(t, s.env, "compute", "create", "-f", instanceFile(t, "basic-example-i.yml"), "--workspace-name", "other-ws")
	if !strings.Contains(stderr, "already exists in location local") || !strings.Contains(stderr, "unique across a location") {
		t.Errorf("the same instance name in another workspace: %s", stderr)
	}
	// A key given at creation without SSH is refused, naming the rule.
	stderr, _ = mustFail(t, s.env, "compute", "create", "--name", "nossh-key", "--type", "computeinstance", "--ssh-key-value", "@"+key+".pub")
	if !strings.Contains(stderr, "ssh_settings.ssh_key_value") || !strings.Contains(stderr, "SSH is disabled") {
		t.Errorf("key without SSH at creation: %s", stderr)
	}
	// SSH enabled with the key set later, by the instance's user.
	mustRun(t, s.env, "compute", "create", "--name", "later-key", "--type", "computeinstance", "--ssh-public-access-enabled", "-o", "none")
	mustRun(t, s.env, "compute", "update", "-n", "later-key", "--ssh-key-value", "@"+key+".pub", "-o", "none")
	v = showInstance(t, s.env, "later-key")
	waitFor(t, 15*time.Second, "the key to reach the instance", func() (bool, string) {
		out, errOut, code := sshRun(t, key, v.SSHSettings.SSHPort, "echo in")
		return code == 0 && out == "in\n", errOut
	})
}

func TestInstanceNotebookAndCustomApp(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	users := withUsers(t, s, map[string]string{"alice": "Contributor", "bob": "Owner"})
	alice := users["alice"]
	appPort := freePort(t)
	file := instanceVariant(t, "custom-app-command.yml", "18787", strconv.Itoa(appPort))
	mustRun(t, alice, "compute", "create", "-f", file, "-o", "none")
	v := waitAppsReady(t, alice, "app-example-i", "files", "jupyter")
	base := "/api/v1/workspaces/default/computes/app-example-i/applications/"
	// Applications are served on an origin of their own: the server's
	// host on another port (their scripts cannot read the API's origin).
	var appsURL string
	for _, a := range v.Applications {
		if a.Name == "files" {
			appsURL = strings.TrimSuffix(a.URI, base+"files/")
		}
	}
	if appsURL == "" || appsURL == s.url || !strings.HasPrefix(appsURL, "http://127.0.0.1:") || !hasApp(v, "files", appsURL+base+"files/") || !hasApp(v, "jupyter", appsURL+base+"jupyter/") {
		t.Fatalf("applications %+v; want files and jupyter on an origin apart from %s", v.Applications, s.url)
	}
	apps := &server{url: appsURL, addr: strings.TrimPrefix(appsURL, "http://")}
	aliceTok, bobTok := tokenOf(alice), tokenOf(users["bob"])
	writeFile(t, filepath.Join(s.nodesDir, "ci-local-app-example-i", "home", "hello.txt"), "from the home")
	code, hdr, body := apps.httpDo(t, "GET", base+"files/hello.txt", aliceTok, nil, nil)
	if code != 200 || string(body) != "from the home" {
		t.Fatalf("the custom app through the proxy: %d %q", code, body)
	}
	if got := hdr.Get("Cross-Origin-Resource-Policy"); got != "same-origin" {
		t.Errorf("the custom app's Cross-Origin-Resource-Policy %q, want same-origin", got)
	}
	// The application's output (http.server logs each request) reaches
	// `compute logs --app`, for its user and not another Contributor.
	waitFor(t, 15*time.Second, "the request in the application's log", func() (bool, string) {
		out, errOut, _ := run(t, alice, "compute", "logs", "-n", "app-example-i", "--app", "files")
		return strings.Contains(out, "GET /hello.txt"), out + errOut
	})
	if out, errOut, code := run(t, users["bob"], "compute", "logs", "-n", "app-example-i", "--app", "files"); code != 0 || !strings.Contains(out, "GET /hello.txt") {
		t.Errorf("bob (Owner) reading the application's log: %d %q %q", code, out, errOut)
	}
	// The API's origin sends old links there (307), and the applications'
	// origin serves nothing but applications.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if resp, err := noFollow.Get(s.url + base + "files/hello.txt"); err != nil || resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != appsURL+base+"files/hello.txt" {
		t.Errorf("the app on the API's origin: %v %v, want 307 to the applications' origin", resp, err)
	} else {
		resp.Body.Close()
	}
	if code, _, _ := apps.httpDo(t, "GET", "/api/v1/whoami", aliceTok, nil, nil); code != http.StatusNotFound {
		t.Errorf("whoami on the applications' origin: %d, want 404", code)
	}
	// Old links on the API's origin still work (the client follows the 307).
	if code, _, body := s.httpDo(t, "GET", base+"files/hello.txt", aliceTok, nil, nil); code != 200 || string(body) != "from the home" {
		t.Errorf("the custom app through the API's origin: %d %q", code, body)
	}
	if code, _, _ := apps.httpDo(t, "GET", base+"files/hello.txt", bobTok, nil, nil); code != http.StatusForbidden {
		t.Errorf("bob (Owner) at alice's app: %d", code)
	}
	// The notebook: start a kernel over the proxy and run 1+1 on its
	// WebSocket, as a notebook page does.
	code, _, body = apps.httpDo(t, "POST", base+"jupyter/api/kernels", aliceTok, []byte(`{"name":"python3"}`), map[string]string{"Content-Type": "application/json"})
	var k struct{ ID string }
	if code != http.StatusCreated || json.Unmarshal(body, &k) != nil || k.ID == "" {
		t.Fatalf("starting a kernel through the proxy: %d %s", code, body)
	}
	if got := runKernel(t, apps, aliceTok, base+"jupyter/api/kernels/"+k.ID+"/channels", "1+1"); got != "2" {
		t.Fatalf("1+1 on the kernel gave %q", got)
	}
	if _, _, err := websocket.Dial(context.Background(), "ws://"+apps.addr+base+"jupyter/api/kernels/"+k.ID+"/channels",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + bobTok}}}); err == nil {
		t.Error("bob opened the kernel's WebSocket")
	}
	// A running custom app keeps the instance from being idle.
	v = showInstance(t, alice, "app-example-i")
	if v.IdleState == nil || !strings.Contains(strings.Join(v.IdleState.Activity, ";"), "custom app files running") {
		t.Errorf("idle state %+v; want the custom app as activity", v.IdleState)
	}
}

func hasApp(v instanceView, name, uri string) bool {
	for _, a := range v.Applications {
		if a.Name == name && a.URI == uri {
			return true
		}
	}
	return false
}

func waitAppsReady(t *testing.T, env []string, name string, apps ...string) instanceView {
	t.Helper()
	if slices.Contains(apps, "jupyter") {
		// The agent starts Debian's notebook server: without it the
		// application never becomes ready.
		testenv.Jupyter(t)
	}
	var v instanceView
	waitFor(t, 60*time.Second, "applications "+strings.Join(apps, ", ")+" to be ready", func() (bool, string) {
		v = showInstance(t, env, name)
		ready := 0
		for _, a := range v.Applications {
			for _, want := range apps {
				if a.Name == want && a.Ready {
					ready++
				}
			}
		}
		return ready == len(apps), fmt.Sprintf("%s, apps %+v", v, v.Applications)
	})
	return v
}

// runKernel executes code on a Jupyter kernel over its WebSocket (the
// Jupyter messaging protocol) and returns the text of its result.
func runKernel(t *testing.T, s *server, token, path, code string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var c *websocket.Conn
	for attempt := 1; ; attempt++ {
		var resp *http.Response
		var err error
		c, resp, err = websocket.Dial(ctx, "ws://"+s.addr+path, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
		if err == nil {
			break
		}
		status, body := 0, []byte(nil)
		if resp != nil {
			// The dialer keeps the first 1 KiB of a refusal's body: the
			// proxy's words for it.
			status = resp.StatusCode
			body, _ = io.ReadAll(resp.Body)
		}
		// A 502 is the proxy's "does not answer yet, try again in a
		// moment" (a kernel still starting on a loaded machine), and a
		// notebook page reconnects on it too: a few tries, each logged.
		if status != http.StatusBadGateway || attempt == 5 {
			t.Fatalf("kernel WebSocket through the proxy (try %d): %v (status %d: %s)", attempt, err, status, body)
		}
		t.Logf("kernel WebSocket through the proxy, try %d: %v (status %d: %s); trying again", attempt, err, status, body)
		time.Sleep(time.Second)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 22)
	msgID := "shoal-e2e-1"
	req := map[string]any{
		"header":        map[string]any{"msg_id": msgID, "username": "e2e", "session": "shoal-e2e", "msg_type": "execute_request", "version": "5.3"},
		"parent_header": map[string]any{}, "metadata": map[string]any{}, "channel": "shell",
		"content": map[string]any{"code": code, "silent": false, "store_history": false, "user_expressions": map[string]any{}, "allow_stdin": false},
	}
	b, _ := json.Marshal(req)
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("reading the kernel's answer: %v", err)
		}
		var m struct {
			Header struct {
				MsgType string `json:"msg_type"`
			} `json:"header"`
			ParentHeader struct {
				MsgID string `json:"msg_id"`
			} `json:"parent_header"`
			Content struct {
				Data  map[string]any `json:"data"`
				Ename string         `json:"ename"`
			} `json:"content"`
		}
		if json.Unmarshal(data, &m) != nil || m.ParentHeader.MsgID != msgID {
			continue
		}
		switch m.Header.MsgType {
		case "execute_result":
			return fmt.Sprint(m.Content.Data["text/plain"])
		case "error":
			t.Fatalf("the kernel raised %s", m.Content.Ename)
		}
	}
}
