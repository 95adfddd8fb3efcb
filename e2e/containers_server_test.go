package e2e_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Registry logins through the CLI: added with the password on standard
// input, listed without it, removed; the password shows in no CLI output,
// job, event, or line the server or its nodes write, even after a job
// whose image comes from that registry was handed to a node.
func TestRegistriesCLI(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const secret = "e2e-registry-password-9f3c"
	var seen strings.Builder
	out, stderr, code := runStdin(t, s.env, secret+"\n", "registry", "add", "--server", "localhost:5999", "--username", "team", "--password-stdin", "-o", "json")
	if code != 0 {
		t.Fatalf("registry add: exit %d: %s", code, stderr)
	}
	seen.WriteString(out + stderr)
	out = mustRun(t, s.env, "registry", "add", "--server", "plain.example.com:5000", "--insecure", "-o", "json")
	seen.WriteString(out)
	list := mustRun(t, s.env, "registry", "list", "-o", "tsv")
	seen.WriteString(list)
	for _, want := range []string{"localhost:5999\tteam\t\t", "plain.example.com:5000\t\tTrue"} {
		if !strings.Contains(list, want) {
			t.Errorf("registry list %q lacks %q", list, want)
		}
	}
	// A login without its password on standard input is refused.
	_, stderr, code = run(t, s.env, "registry", "add", "--server", "localhost:5998", "--username", "team")
	if code == 0 || !strings.Contains(stderr, "password-stdin") {
		t.Errorf("login without --password-stdin: exit %d, %q", code, stderr)
	}
	_, stderr, code = run(t, s.env, "registry", "add", "--server", "http://localhost:5998", "--insecure")
	if code == 0 || !strings.Contains(stderr, "server") {
		t.Errorf("a URL as server: exit %d, %q; want refused naming server", code, stderr)
	}

	// A job whose image comes from the registry: the node is handed the
	// login with its task. Whatever the node makes of it (it ends one way
	// or another), nobody reads the password back.
	createCluster(t, s, "reg-cpu", "--size", "Standard_DS3_v2", "--max-instances", "1")
	name := submitJob(t, s, writeJobFile(t, "command: echo hi\ncompute: reg-cpu\nenvironment:\n  image: localhost:5999/team/train:3\n"))
	waitFor(t, 90*time.Second, "job "+name+" to end", func() (bool, string) {
		j := getJob(t, s, name)
		return j.Status == "Completed" || j.Status == "Failed", j.String()
	})
	seen.WriteString(mustRun(t, s.env, "job", "show", "-n", name, "-o", "json"))
	seen.WriteString(mustRun(t, s.env, "job", "events", "-n", name, "-o", "json"))

	mustRun(t, s.env, "registry", "remove", "--server", "localhost:5999")
	if list = mustRun(t, s.env, "registry", "list", "-o", "tsv"); strings.Contains(list, "localhost:5999") {
		t.Errorf("after remove: %q", list)
	}
	_, stderr, code = run(t, s.env, "registry", "remove", "--server", "localhost:5999")
	if code == 0 || !strings.Contains(stderr, "not") {
		t.Errorf("removing it again: exit %d, %q; want not found", code, stderr)
	}
	seen.WriteString(s.log())
	for _, dir := range []string{s.dataDir, s.nodesDir} {
		// Logs and files the server and its nodes wrote (the database
		// holds the password sealed, never in clear).
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), secret) {
				t.Errorf("the password is in clear in %s", p)
			}
			return nil
		})
	}
	if strings.Contains(seen.String(), secret) {
		t.Errorf("the password came out:\n%s", seen.String())
	}
}

// A location's container mode decides at submit: off refuses an image
// job, required a job without one, each naming the field and the
// setting; a bad mode stops the server naming it.
func TestContainerModesAtSubmit(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig + "locations:\n  - name: bare\n    containers: off\n  - name: boxed\n    provider: local\n    containers: required\n"})
	createCluster(t, s, "on-bare", "--size", "Standard_DS3_v2", "--max-instances", "1", "--location", "bare")
	createCluster(t, s, "on-boxed", "--size", "Standard_DS3_v2", "--max-instances", "1", "--location", "boxed")
	submit := func(compute, env string) (string, int) {
		doc := "command: echo hi\ncompute: " + compute + "\n"
		if env != "" {
			doc += "environment:\n  image: " + env + "\n"
		}
		_, stderr, code := run(t, s.env, "job", "create", "-f", writeJobFile(t, doc))
		return stderr, code
	}
	if stderr, code := submit("on-bare", "python:3.11"); code == 0 || !strings.Contains(stderr, "environment") || !strings.Contains(stderr, "containers: off") {
		t.Errorf("image job at containers: off: exit %d, %q", code, stderr)
	}
	if stderr, code := submit("on-boxed", ""); code == 0 || !strings.Contains(stderr, "environment") || !strings.Contains(stderr, "containers: required") {
		t.Errorf("bare job at containers: required: exit %d, %q", code, stderr)
	}
	if stderr, code := submit("on-bare", ""); code != 0 {
		t.Errorf("bare job at containers: off: exit %d, %q", code, stderr)
	}
	if stderr, code := submit("on-boxed", "python:3.11"); code != 0 {
		t.Errorf("image job at containers: required: exit %d, %q", code, stderr)
	}
	if got := mustRun(t, s.env, "location", "show", "--name", "boxed", "--query", "containers", "-o", "tsv"); strings.TrimSpace(got) != "required" {
		t.Errorf("location show's containers = %q, want required", got)
	}

	bad := &server{t: t, dir: t.TempDir()}
	cfg := filepath.Join(bad.dir, "server.yml")
	if err := os.WriteFile(cfg, []byte("locations:\n  - name: x\n    containers: sometimes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := run(t, s.env, "server", "--listen", freeAddr(t), "--data-dir", filepath.Join(bad.dir, "data"), "--config", cfg)
	if code == 0 || !strings.Contains(stderr, "containers") || !strings.Contains(stderr, "sometimes") {
		t.Errorf("server with containers: sometimes: exit %d, %q; want it to stop naming the field", code, stderr)
	}
}
