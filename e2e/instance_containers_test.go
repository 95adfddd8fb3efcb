package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/internal/testctr"
	"github.com/shoal-ml/shoal/internal/testenv"
)

// instanceContainersConfig gives the local location the test-built
// instance image: every instance of the server runs in a container of it.
// Its nodes' lease is longer than fastJobsConfig's 3 s: an instance's
// agent starts containers and Jupyter while it heartbeats, and on a
// loaded machine (CI's two cores beside other test packages) a 1 s lease
// declared a healthy instance's machine lost.
func instanceContainersConfig(image string) string {
	return "node_lease: 6s\nnode_lease_grace: 6s\nkill_grace: 1s\nlocations:\n  - name: local\n    instance_image: " + image + "\n"
}

// Compute instances in containers, end to end: a real server, its agents
// started by the local provider, real podman with the image built from
// Debian packages. One server serves every subtest (each instance costs
// a container and a Jupyter); the subtests run in order, each building
// on what the one before left.
func TestInstanceContainers(t *testing.T) {
	t.Parallel() // its leak check counts its own agents' containers
	env := testctr.Shared(t)
	image := testctr.InstanceImage(t)
	s := startServer(t, serverOpts{Config: instanceContainersConfig(image),
		Env: []string{"SHOAL_AGENT_CONTAINER_HOST=" + env.Host, "SHOAL_AGENT_INSECURE_REGISTRIES=" + env.Registry.Addr}})
	users := withUsers(t, s, map[string]string{"alice": "Contributor", "bob": "Contributor"})
	alice, bob := users["alice"], users["bob"]
	home := func(name string) string { return filepath.Join(s.nodesDir, "ci-local-"+name, "home") }
	appsBase := func(name string) string { return "/api/v1/workspaces/default/computes/" + name + "/applications/" }

	// The seed's basic instance, unchanged: it runs in a container, none
	// of whose processes is root on the host, and its Jupyter answers
	// through the proxy for alice only, a kernel running as azureuser.
	t.Run("basic seed in a container", func(t *testing.T) {
		// --no-wait: the wait is waitInstanceState's 3 minutes; the CLI's own
		// (the run helper's 30 s) was too short for a container's start on a
		// loaded CI machine.
		mustRun(t, alice, "compute", "create", "-f", instanceFile(t, "basic-example-i.yml"), "-o", "none", "--no-wait")
		waitInstanceState(t, alice, "basic-example-i", 3*time.Minute, "Running")
		if got := showIsolation(t, alice, "basic-example-i"); got != "container" {
			t.Errorf("compute show's isolation = %q, want container", got)
		}
		v := waitAppsReady(t, alice, "basic-example-i", "jupyter")
		procs := instanceHostProcs(t, env, "basic-example-i")
		jupyter := false
		for _, p := range procs {
			if p.uid == 0 {
				t.Errorf("host process %d of the instance's container runs as uid 0: %s", p.pid, p.cmd)
			}
			jupyter = jupyter || strings.Contains(p.cmd, "jupyter")
		}
		if !jupyter {
			t.Errorf("no Jupyter among the container's host processes %+v: the check did not see the exec'd processes", procs)
		}

		apps := appsServer(t, s, v, "jupyter")
		base := appsBase("basic-example-i") + "jupyter/"
		if code, _, body := apps.httpDo(t, "GET", base+"api/status", tokenOf(alice), nil, nil); code != http.StatusOK {
			t.Errorf("Jupyter through the proxy for alice: %d %s", code, body)
		}
		if code, _, body := apps.httpDo(t, "GET", base+"api/status", tokenOf(bob), nil, nil); code != http.StatusForbidden {
			t.Errorf("alice's Jupyter for bob: %d %s, want 403", code, body)
		}
		code, _, body := apps.httpDo(t, "POST", base+"api/kernels", tokenOf(alice), []byte(`{"name":"python3"}`), map[string]string{"Content-Type": "application/json"})
		var k struct{ ID string }
		if code != http.StatusCreated || json.Unmarshal(body, &k) != nil || k.ID == "" {
			t.Fatalf("starting a kernel through the proxy: %d %s", code, body)
		}
		if got := runKernel(t, apps, tokenOf(alice), base+"api/kernels/"+k.ID+"/channels", "__import__('os').getuid(), __import__('pwd').getpwuid(__import__('os').getuid()).pw_name"); got != "(1000, 'azureuser')" {
			t.Errorf("the kernel runs as %s, want (1000, 'azureuser')", got)
		}

		// Deleted, the instance leaves no container.
		mustRun(t, alice, "compute", "delete", "-n", "basic-example-i", "--yes")
		waitFor(t, time.Minute, "basic-example-i's container to go", func() (bool, string) {
			l := instanceContainers(t, env, "basic-example-i")
			return len(l) == 0, fmt.Sprintf("%d left", len(l))
		})
	})

	// The seed's setup-script instance, its scripts made to say where they
	// run, with the seed's application from an image (a bind mount from
	// the home): the scripts run inside as azureuser, who may sudo.
	alicePort := freePort(t)
	t.Run("setup scripts inside", func(t *testing.T) {
		creation := "echo created once >> created.txt; touch alice-marker.txt; mkdir -p cloudfiles; echo shared by alice > cloudfiles/hello.txt; " +
			"sed -n s/^PRETTY_NAME=//p /etc/os-release > inside.txt; id -un >> inside.txt; sudo -n id -u >> inside.txt; " +
			"if test -e /usr/bin/podman; then echo host-podman; else echo no-podman; fi >> inside.txt"
		file := instanceVariant(t, "setup-scripts.yml", `echo "created once" >> created.txt`, creation,
			"echo started >> started.txt", "echo started >> started.txt; "+lookAround("bob-marker.txt"))
		appendFile(t, file, fmt.Sprintf(`custom_applications:
  - name: files
    type: docker
    image:
      type: docker
      reference: %s/%s
    command: python3 -m http.server %d --bind 127.0.0.1 --directory /srv/cloudfiles
    endpoints:
      - name: connect
        target: %d
        published: %d
        protocol: http
    environment_variables:
      OWNER: alice
    bind_mounts:
      - source: /home/azureuser/cloudfiles
        target: /srv/cloudfiles
        read_only: true
`, env.Registry.Addr, testctr.PushedBase, alicePort, alicePort, alicePort))
		mustRun(t, alice, "compute", "create", "-f", file, "-o", "none", "--no-wait")
		waitInstanceState(t, alice, "setup-example-i", 3*time.Minute, "Running")
		if got := showIsolation(t, alice, "setup-example-i"); got != "container" {
			t.Errorf("compute show's isolation = %q, want container", got)
		}
		inside := readHomeFile(t, home("setup-example-i"), "inside.txt")
		osRelease := containerOSRelease(t, env, "setup-example-i")
		if want := osRelease + "\nazureuser\n0\nno-podman\n"; inside != want {
			t.Errorf("the creation script saw %q, want %q (the image's os-release, azureuser, sudo to 0, none of the host's podman)", inside, want)
		}
		for _, p := range instanceHostProcs(t, env, "setup-example-i") {
			if p.uid == 0 {
				t.Errorf("host process %d of the instance's container runs as uid 0: %s", p.pid, p.cmd)
			}
		}
	})

	// bob's instance cannot see alice's files or processes, and alice's
	// (started again after bob's) cannot see bob's.
	t.Run("two users apart", func(t *testing.T) {
		// alice's Jupyter runs while bob's creation script looks.
		waitAppsReady(t, alice, "setup-example-i", "jupyter")
		file := filepath.Join(t.TempDir(), "bob.yml")
		writeFile(t, file, "name: bob-ci\ntype: computeinstance\nsize: STANDARD_DS3_v2\nsetup_scripts:\n  creation_script:\n    command: touch bob-marker.txt; "+
			lookAround("alice-marker.txt")+"\n")
		mustRun(t, bob, "compute", "create", "-f", file, "-o", "none", "--no-wait")
		waitInstanceState(t, bob, "bob-ci", 3*time.Minute, "Running")
		checkApart(t, home("bob-ci"), "alice-marker.txt", "setup-example-i")

		// alice stops and starts her instance: her startup script looks
		// around again, now with bob's Jupyter running.
		waitAppsReady(t, bob, "bob-ci", "jupyter")
		for _, f := range []string{"ps.txt", "ls.txt", "found.txt"} {
			os.Remove(filepath.Join(home("setup-example-i"), f))
		}
		mustRun(t, alice, "compute", "stop", "-n", "setup-example-i")
		waitInstanceState(t, alice, "setup-example-i", 2*time.Minute, "Stopped")
		if l := instanceContainers(t, env, "setup-example-i"); len(l) != 0 {
			t.Errorf("a stopped instance keeps %d container(s)", len(l))
		}
		mustRun(t, alice, "compute", "start", "-n", "setup-example-i")
		waitInstanceState(t, alice, "setup-example-i", 2*time.Minute, "Running")
		checkApart(t, home("setup-example-i"), "bob-marker.txt", "bob-ci")
	})

	// What alice's scripts wrote in her home before the stop is there
	// after the start: the creation script ran once, the startup script
	// at each start.
	t.Run("files survive stop and start", func(t *testing.T) {
		h := home("setup-example-i")
		if got := readHomeFile(t, h, "created.txt"); got != "created once\n" {
			t.Errorf("created.txt %q, want the creation script's one line", got)
		}
		if got := readHomeFile(t, h, "started.txt"); got != "started\nstarted\n" {
			t.Errorf("started.txt %q, want a line for each of two starts", got)
		}
		if got := readHomeFile(t, h, "cloudfiles/hello.txt"); got != "shared by alice\n" {
			t.Errorf("cloudfiles/hello.txt %q", got)
		}
		readHomeFile(t, h, "alice-marker.txt")
	})

	// The seed's application from an image, with a bind mount from the
	// home, answers through the proxy for alice and not for bob.
	t.Run("image application through the proxy", func(t *testing.T) {
		v := waitAppsReady(t, alice, "setup-example-i", "files", "jupyter")
		apps := appsServer(t, s, v, "files")
		path := appsBase("setup-example-i") + "files/hello.txt"
		if code, _, body := apps.httpDo(t, "GET", path, tokenOf(alice), nil, nil); code != http.StatusOK || string(body) != "shared by alice\n" {
			t.Errorf("alice's image application for alice: %d %q", code, body)
		}
		if code, _, body := apps.httpDo(t, "GET", path, tokenOf(bob), nil, nil); code != http.StatusForbidden || strings.Contains(string(body), "shared by alice") {
			t.Errorf("alice's image application for bob: %d %q, want 403", code, body)
		}
	})

	// SSH lands in the container: the image's files and not the host's,
	// azureuser with sudo, sftp into the home, a forward to a port that
	// listens only inside; the session's processes are not root on the
	// host.
	t.Run("ssh into the container", func(t *testing.T) {
		key := sshKey(t, "k")
		mustRun(t, alice, "compute", "create", "--name", "ssh-ci", "--type", "ComputeInstance",
			"--ssh-public-access-enabled", "--ssh-key-value", "@"+key+".pub", "-o", "none", "--no-wait")
		waitInstanceState(t, alice, "ssh-ci", 3*time.Minute, "Running")
		v := showInstance(t, alice, "ssh-ci")
		out, errOut, code := sshRun(t, key, v.SSHSettings.SSHPort,
			"id -un; sudo -n id -u; if test -e /usr/bin/podman; then echo host-podman; else echo no-podman; fi; echo home=$HOME; sleep 3 & echo pid=$!; wait")
		if code != 0 {
			t.Fatalf("ssh: exit %d, %q, %s", code, out, errOut)
		}
		for _, want := range []string{"azureuser\n0\n", "no-podman\n", "home=/home/azureuser\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("the SSH session's output lacks %q:\n%s", want, out)
			}
		}
		for _, p := range instanceHostProcs(t, env, "ssh-ci") {
			if p.uid == 0 {
				t.Errorf("host process %d of the instance's container runs as uid 0: %s", p.pid, p.cmd)
			}
		}
		// sftp puts a file into the home, where the instance's own
		// processes find it.
		local := filepath.Join(t.TempDir(), "up.txt")
		if err := os.WriteFile(local, []byte("sent by sftp\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		batch := filepath.Join(t.TempDir(), "batch")
		os.WriteFile(batch, []byte("put "+local+" up.txt\n"), 0o600)
		sftp := exec.Command(testenv.OpenSSH(t, "sftp"), append(sshOpts(t, key), "-b", batch, "-P", strconv.Itoa(v.SSHSettings.SSHPort), "azureuser@127.0.0.1")...)
		if b, err := sftp.CombinedOutput(); err != nil {
			t.Fatalf("sftp: %v\n%s", err, b)
		}
		if out, _, code := sshRun(t, key, v.SSHSettings.SSHPort, "cat /home/azureuser/up.txt; stat -c %U /home/azureuser/up.txt"); code != 0 || out != "sent by sftp\nazureuser\n" {
			t.Errorf("the sftp'd file inside: exit %d, %q", code, out)
		}
		mustRun(t, alice, "compute", "delete", "-n", "ssh-ci", "--yes")
	})

	// Deleted, the instances leave no container (theirs, nor the
	// application's) on the engine.
	t.Run("deleted without a trace", func(t *testing.T) {
		mustRun(t, alice, "compute", "delete", "-n", "setup-example-i", "--yes")
		mustRun(t, bob, "compute", "delete", "-n", "bob-ci", "--yes")
		waitFor(t, time.Minute, "the instances to be deleted", func() (bool, string) {
			out := mustRun(t, s.env, "compute", "list", "-o", "tsv")
			return strings.TrimSpace(out) == "", out
		})
		assertNoContainersOf(t, env, s.nodesDir)
	})
}

// lookAround is a script that writes what the instance sees: its
// processes (ps.txt), /home (ls.txt) and where a file named marker is
// (found.txt).
func lookAround(marker string) string {
	return "ps -eo user,pid,args > ps.txt; ls -a /home /home/azureuser > ls.txt; " +
		`find / \( -path /proc -o -path /sys \) -prune -o -name ` + marker + " -print > found.txt 2>/dev/null; true"
}

// showIsolation is compute show's isolation of an instance.
func showIsolation(t *testing.T, env []string, name string) string {
	t.Helper()
	return strings.TrimSpace(mustRun(t, env, "compute", "show", "-n", name, "--query", "isolation", "-o", "tsv"))
}

// appsServer is the applications' origin an instance's app is served on.
func appsServer(t *testing.T, s *server, v instanceView, app string) *server {
	t.Helper()
	for _, a := range v.Applications {
		if a.Name == app {
			u := strings.TrimSuffix(a.URI, "/api/v1/workspaces/default/computes/"+v.Name+"/applications/"+app+"/")
			return &server{url: u, addr: strings.TrimPrefix(u, "http://")}
		}
	}
	t.Fatalf("%s has no application %s: %+v", v.Name, app, v.Applications)
	return nil
}

// instanceContainers are the containers the agents run for an instance of
// the default workspace (labelled shoal.instance).
func instanceContainers(t *testing.T, env *testctr.Env, name string) []container.Summary {
	t.Helper()
	e, err := container.Open(context.Background(), container.Config{Host: env.Host})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	l, err := e.List(context.Background(), map[string]string{"shoal.instance": "default/" + name})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// hostProc is a host process: its pid, real uid and command line.
type hostProc struct {
	pid, uid int
	cmd      string
}

// instanceHostProcs are the host's processes in the instance container's
// PID namespace: its first process and everything exec'd into it (setup
// scripts, Jupyter), which are not descendants of the first on the host.
func instanceHostProcs(t *testing.T, env *testctr.Env, name string) []hostProc {
	t.Helper()
	l := instanceContainers(t, env, name)
	if len(l) != 1 {
		t.Fatalf("instance %s has %d containers, want 1", name, len(l))
	}
	e, err := container.Open(context.Background(), container.Config{Host: env.Host})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	st, err := e.State(context.Background(), l[0].ID)
	if err != nil || !st.Running || st.Pid == 0 {
		t.Fatalf("state of %s's container: %+v %v", name, st, err)
	}
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", st.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if self, _ := os.Readlink("/proc/self/ns/pid"); self == ns {
		t.Fatalf("%s's container shares the host's PID namespace", name)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []hostProc
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if n, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); err != nil || n != ns {
			continue
		}
		p := hostProc{pid: pid, uid: -1}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				// Real, effective, saved and filesystem uids: any 0 is root.
				if f := strings.Fields(line); len(f) == 5 && f[0] == "Uid:" {
					p.uid, _ = strconv.Atoi(f[1])
					for _, u := range f[2:] {
						if u == "0" {
							p.uid = 0
						}
					}
				}
			}
		}
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		p.cmd = strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
		if p.uid != -1 {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no host process in %s's container's PID namespace", name)
	}
	return out
}

// containerOSRelease is the PRETTY_NAME of the instance container's
// /etc/os-release (the image's), read by the engine as root inside.
func containerOSRelease(t *testing.T, env *testctr.Env, name string) string {
	t.Helper()
	l := instanceContainers(t, env, name)
	if len(l) != 1 {
		t.Fatalf("instance %s has %d containers, want 1", name, len(l))
	}
	e, err := container.Open(context.Background(), container.Config{Host: env.Host})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var out strings.Builder
	code, err := e.ExecWait(context.Background(), l[0].ID, container.ExecOptions{User: "0:0", Stdout: &out, Stderr: &out,
		Command: []string{"sed", "-n", "s/^PRETTY_NAME=//p", "/etc/os-release"}})
	if err != nil || code != 0 || strings.TrimSpace(out.String()) == "" {
		t.Fatalf("reading the container's os-release: exit %d, %v, %q", code, err, out.String())
	}
	return strings.TrimSpace(out.String())
}

// readHomeFile reads a file an instance's scripts wrote in its home.
func readHomeFile(t *testing.T, home, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, name))
	if err != nil {
		t.Fatalf("the instance's %s: %v", name, err)
	}
	return string(b)
}

// appendFile appends text to a file.
func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// checkApart reads what an instance's script saw (ps.txt, ls.txt,
// found.txt in its home): its own container's processes, only azureuser
// in /home, not the other's marker file nor the other instance's Jupyter.
func checkApart(t *testing.T, home, otherMarker, otherInstance string) {
	t.Helper()
	ps, ls, found := readHomeFile(t, home, "ps.txt"), readHomeFile(t, home, "ls.txt"), readHomeFile(t, home, "found.txt")
	if !strings.Contains(ps, "sleep 3600") || !strings.Contains(ps, "ps -eo") {
		t.Errorf("ps inside did not list the container's own processes:\n%s", ps)
	}
	if strings.Contains(ps, otherInstance) {
		t.Errorf("ps inside lists %s's processes:\n%s", otherInstance, ps)
	}
	if strings.Contains(ls, otherMarker) || strings.TrimSpace(found) != "" {
		t.Errorf("the other's %s is visible: ls\n%s\nfind %q", otherMarker, ls, found)
	}
	if !hostHasProc(otherInstance, "jupyter") {
		t.Errorf("%s's Jupyter does not run on the host: nothing to hide", otherInstance)
	}
	if !strings.Contains(ls, "azureuser") {
		t.Errorf("ls /home inside:\n%s", ls)
	}
}

// hostHasProc reports whether a host process's command line has every
// one of words.
func hostHasProc(words ...string) bool {
	entries, _ := os.ReadDir("/proc")
	for _, d := range entries {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		all := len(b) > 0
		for _, w := range words {
			all = all && strings.Contains(string(b), w)
		}
		if all {
			return true
		}
	}
	return false
}
