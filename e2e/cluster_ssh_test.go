package e2e_test

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// A cluster created with SSH access (the seed's admin account) serves SSH
// on each node: the real OpenSSH client logs in as the admin user with
// the cluster's key and lands in the node's work dir with the node's
// identity in its environment; another key, another user and, on a
// cluster with an admin password, a wrong password are refused, the right
// one accepted. list-nodes gives the port, as Azure's does.
func TestClusterNodesServeSSH(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	key, other := sshKey(t, "admin"), sshKey(t, "stranger")
	createCluster(t, s, "ssh-cluster", "--min-instances", "1", "--max-instances", "1", "--ssh-public-access-enabled",
		"--admin-username", "ops", "--ssh-key-value", "@"+key+".pub")
	createCluster(t, s, "pw-cluster", "--min-instances", "1", "--max-instances", "1", "--ssh-public-access-enabled",
		"--admin-username", "ops", "--admin-password", "Correct-Horse-9")
	createCluster(t, s, "no-ssh", "--min-instances", "1", "--max-instances", "1")
	sshPort := func(cluster string) (string, int) {
		var id string
		var port int
		waitFor(t, 60*time.Second, cluster+"'s node serving SSH", func() (bool, string) {
			nodes := runJSON[[]map[string]any](t, s.env, "compute", "list-nodes", "-n", cluster, "-o", "json")
			if len(nodes) != 1 || nodes[0]["node_state"] != "idle" {
				return false, strings.TrimSpace(mustRun(t, s.env, "compute", "list-nodes", "-n", cluster, "-o", "tsv"))
			}
			p, _ := nodes[0]["ssh_port"].(float64)
			id, port = nodes[0]["node_id"].(string), int(p)
			return port > 0, "no ssh_port yet"
		})
		return id, port
	}
	id, port := sshPort("ssh-cluster")
	run := func(key, user string) (string, string, int) {
		return runSSH(t, key, port, user, `echo "node=$SHOAL_NODE_ID dir=$PWD"`)
	}
	out, errOut, code := run(key, "ops")
	if code != 0 || !strings.Contains(out, "node="+id) {
		t.Fatalf("ops with the cluster's key: exit %d, %q, %s", code, out, errOut)
	}
	if _, errOut, code := run(other, "ops"); code == 0 || !strings.Contains(errOut, "Permission denied") {
		t.Errorf("another key logged in: exit %d, %s", code, errOut)
	}
	if _, errOut, code := run(key, "root"); code == 0 || !strings.Contains(errOut, "Permission denied") {
		t.Errorf("another user logged in: exit %d, %s", code, errOut)
	}

	_, pwPort := sshPort("pw-cluster")
	dial := func(password string) error {
		c, err := ssh.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(pwPort)), &ssh.ClientConfig{
			User: "ops", Auth: []ssh.AuthMethod{ssh.Password(password)},
			HostKeyCallback: ssh.InsecureIgnoreHostKey(), // a test's own server on loopback
			Timeout:         10 * time.Second,
		})
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := dial("Correct-Horse-9"); err != nil {
		t.Errorf("the admin password was refused: %v", err)
	}
	if err := dial("wrong-Password-1"); err == nil {
		t.Errorf("a wrong password logged in")
	}

	// A cluster without SSH access serves none.
	waitFor(t, 60*time.Second, "no-ssh's node idle", func() (bool, string) {
		nodes := runJSON[[]map[string]any](t, s.env, "compute", "list-nodes", "-n", "no-ssh", "-o", "json")
		return len(nodes) == 1 && nodes[0]["node_state"] == "idle", "not idle"
	})
	time.Sleep(time.Second) // a sync or two after it joined
	if nodes := runJSON[[]map[string]any](t, s.env, "compute", "list-nodes", "-n", "no-ssh", "-o", "json"); nodes[0]["ssh_port"] != nil {
		t.Errorf("a node of a cluster without SSH access reports an SSH port: %v", nodes[0]["ssh_port"])
	}
}
