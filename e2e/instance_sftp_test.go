package e2e_test

import (
	"bytes"
	"context"
	"github.com/shoal-ml/shoal/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// A host without OpenSSH's sftp-server, and a shoal binary its accounts
// cannot run (the suite's is in a 0700 folder, as `go run` builds it as
// root): scp and sftp to a host-process instance still work, served as
// the instance's account by the agent's copy of itself in the node's
// run dir (root's, 0755), not "subsystem request failed".
func TestInstanceSFTPWithoutSFTPServer(t *testing.T) {
	t.Parallel()
	testenv.Root(t, "runs instances as accounts of their own (only a root server does)")
	if fi, err := os.Stat(filepath.Dir(shoalBin)); err != nil || fi.Mode().Perm()&0o001 != 0 {
		t.Fatalf("the suite's binary folder %s must be closed to others for this test: %v %v", filepath.Dir(shoalBin), fi, err)
	}
	noSFTP := t.TempDir() // no sftp-server in it
	s := startServer(t, serverOpts{Config: fastJobsConfig, Env: []string{"SHOAL_SFTP_SERVER_PATHS=" + filepath.Join(noSFTP, "sftp-server")}})
	users := withUsers(t, s, map[string]string{"alice": "Contributor"})
	alice := users["alice"]
	key := sshKey(t, "alice")
	mustRun(t, alice, "compute", "create", "--name", "dev-sftp", "--type", "ComputeInstance", "--size", "STANDARD_DS3_v2",
		"--ssh-public-access-enabled", "--ssh-key-value", "@"+key+".pub", "-o", "none")
	v := showInstance(t, alice, "dev-sftp")
	if v.State != "Running" || v.SSHSettings == nil || v.SSHSettings.SSHPort == 0 {
		t.Fatalf("after create: %s, ssh %+v", v, v.SSHSettings)
	}
	port := strconv.Itoa(v.SSHSettings.SSHPort)
	client := func(name string, stdin []byte, args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, append(sshOpts(t, key), args...)...)
		cmd.Stdin = bytes.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	local := filepath.Join(t.TempDir(), "data.csv")
	if err := os.WriteFile(local, []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	client("scp", nil, "-P", port, local, "azureuser@127.0.0.1:data.csv")
	back := filepath.Join(t.TempDir(), "back.csv")
	client("sftp", []byte("get data.csv "+back+"\n"), "-P", port, "-b", "-", "azureuser@127.0.0.1")
	if b, _ := os.ReadFile(back); string(b) != "a,b\n1,2\n" {
		t.Fatalf("scp up, sftp down: %q", b)
	}
	copyPath := filepath.Join(s.nodesDir, "ci-local-dev-sftp", "bin", "shoal-sftp")
	fi, err := os.Stat(copyPath)
	if err != nil {
		t.Fatalf("the agent's copy for SFTP: %v", err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || fi.Mode().Perm() != 0o755 {
		t.Errorf("%s: uid %d mode %v, want root's 0755", copyPath, st.Uid, fi.Mode())
	}
}
