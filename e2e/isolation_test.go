package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The attacks of a Contributor on a shared Shoal, with the server started
// as docs/operations/security.md says: a job that reads the server's admin token from the
// data dir, another user's instance home and the secrets in other
// processes' environments; and an instance's SSH login that reads the
// admin token. Run as root (as CI runs it), work runs as accounts of its
// own and every attack is refused. Run as another user there are no other
// accounts to run as: the server says so at startup and in `location
// show`, which is what this test checks then.
func TestWorkCannotReachServerOrOtherUsers(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	users := withUsers(t, s, map[string]string{"mallory": "Contributor", "bob": "Contributor"})
	mallory, bob := users["mallory"], users["bob"]
	t.Cleanup(func() {
		// The computes' agents outlive the server on purpose: delete them.
		run(t, s.env, "compute", "delete", "-n", "bob-ci", "--yes", "-o", "none")
		run(t, s.env, "compute", "delete", "-n", "cpu-cluster", "--yes", "-o", "none")
		waitFor(t, time.Minute, "the agents to go", func() (bool, string) {
			left := agentProcs(s.nodesDir)
			return len(left) == 0, fmt.Sprint(left)
		})
	})

	loc := mustRun(t, s.env, "location", "show", "-n", "local", "-o", "json")
	if os.Geteuid() != 0 {
		if !strings.Contains(loc, "can read what") || !strings.Contains(s.log(), "run as root, or use containers, before sharing this server") {
			t.Fatalf("a server that is not root must say its work runs as its own user:\nlocation: %s\nlog: %s", loc, s.logTail())
		}
		return
	}
	if !strings.Contains(loc, "account of its own per user") {
		t.Errorf("location show does not say how work is isolated: %s", loc)
	}
	if fi, err := os.Stat(s.dataDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode: %v %v, want 0700", fi.Mode(), err)
	}
	for _, name := range []string{"admin.token", "shoal.db"} {
		if fi, err := os.Stat(filepath.Join(s.dataDir, name)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want 0600", name, fi.Mode(), err)
		}
	}

	// bob's instance, with an identity (its processes carry MSI_SECRET)
	// and SSH, and a secret in his home.
	bobKey := sshKey(t, "bob")
	mustRun(t, bob, "compute", "create", "--name", "bob-ci", "--type", "ComputeInstance", "--identity-type", "system_assigned",
		"--ssh-public-access-enabled", "--ssh-key-value", "@"+bobKey+".pub", "-o", "none")
	v := showInstance(t, bob, "bob-ci")
	if v.State != "Running" {
		t.Fatalf("bob's instance: %s", v)
	}
	home := filepath.Join(s.nodesDir, "ci-local-bob-ci", "home")
	writeFile(t, filepath.Join(home, "secret.txt"), "bob's secret\n")

	// bob's own SSH login: not root, his home, and not the server's token.
	out, errOut, code := sshRun(t, bobKey, v.SSHSettings.SSHPort, "id -u; cat secret.txt; cat "+filepath.Join(s.dataDir, "admin.token")+" || echo REFUSED")
	if code != 0 || strings.HasPrefix(out, "0\n") || !strings.Contains(out, "bob's secret") || !strings.Contains(out, "REFUSED") || strings.Contains(out, s.adminToken(t)) {
		t.Fatalf("bob's SSH login: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// mallory's job tries everything.
	createCluster(t, s, "cpu-cluster", "--max-instances", "1", "--idle-time-before-scale-down", "120")
	job := writeJobFile(t, fmt.Sprintf(`$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
type: command
command: |
  echo "uid=$(id -u) user=$(id -un) home=$HOME"
  cat %[1]s/admin.token && echo "GOT ADMIN TOKEN"
  ls %[1]s && echo "LISTED DATA DIR"
  cat %[2]s/secret.txt && echo "GOT BOB'S SECRET"
  ls %[3]s && echo "LISTED NODES"
  cat $SHOAL_NODE_DIR/agent.log > /dev/null && echo "READ AGENT LOG"
  for f in /proc/[0-9]*/environ; do tr '\0' '\n' < $f 2>/dev/null; done | grep -c '^MSI_SECRET=' | sed 's/^/msi secrets seen: /'
  touch $HOME/mine && echo "HOME WRITABLE"
  echo done
compute: azureml:cpu-cluster
`, s.dataDir, home, s.nodesDir))
	j := runJSON[jobView](t, mallory, "job", "create", "-f", job, "-o", "json")
	waitJob(t, s, j.Name, 2*time.Minute, "Completed")
	log := jobLog(t, s, j.Name)
	for _, leak := range []string{"GOT ADMIN TOKEN", "LISTED DATA DIR", "GOT BOB'S SECRET", "LISTED NODES", "READ AGENT LOG", s.adminToken(t), "bob's secret"} {
		if strings.Contains(log, leak) {
			t.Errorf("mallory's job reached %q:\n%s", leak, log)
		}
	}
	if !strings.Contains(log, "msi secrets seen: 0") || !strings.Contains(log, "HOME WRITABLE") || !strings.Contains(log, "done") {
		t.Errorf("mallory's job log:\n%s", log)
	}
	if strings.Contains(log, "uid=0 ") || !strings.Contains(log, "user=shoal-mallory-") {
		t.Errorf("mallory's job does not run as her own account:\n%s", log)
	}
	// Her token cannot grant her Owner, with or without the admin's token.
	if _, code := mustFail(t, mallory, "role", "assign", "--user", "mallory", "--role", "Owner"); code == 0 {
		t.Error("mallory granted herself Owner")
	}
	if roles := mustRun(t, s.env, "role", "list", "-o", "tsv"); slices.ContainsFunc(strings.Split(roles, "\n"), func(l string) bool {
		return strings.Contains(l, "mallory") && strings.Contains(l, "Owner")
	}) {
		t.Errorf("mallory is an Owner:\n%s", roles)
	}
}
