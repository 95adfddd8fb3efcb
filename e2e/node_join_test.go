package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A machine joined by hand: `compute add-node` prints the command, the
// user runs it, the node takes jobs and stays past the idle time, and
// `compute remove-node` drains it and its agent exits.
func TestNodeJoinedByHand(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	createCluster(t, s, "own-cluster", "--max-instances", "2", "--idle-time-before-scale-down", "1")
	j := runJSON[map[string]any](t, s.env, "compute", "add-node", "-n", "own-cluster", "-o", "json")
	node, command := jsonStr(j["node_id"]), jsonStr(j["command"])
	if node == "" || !strings.Contains(command, "SHOAL_JOIN_TOKEN=shoal_") || !strings.Contains(command, "--node-id "+node) || !strings.Contains(command, s.url) {
		t.Fatalf("add-node printed %v", j)
	}
	hostState := func() (string, string, int) {
		loc := runJSON[map[string]any](t, s.env, "location", "show", "-n", "local", "-o", "json")
		hosts, _ := loc["hosts"].([]any)
		cpus := 0
		for _, h := range hosts {
			hm := h.(map[string]any)
			if jsonStr(hm["kind"]) == "provider" {
				cpus = jsonInt(hm["vcpus"])
			}
			if jsonStr(hm["name"]) == node {
				return jsonStr(hm["state"]), jsonStr(hm["reason"]), cpus
			}
		}
		return "", "", cpus
	}
	if st, reason, cpus := hostState(); st != "unusable" || !strings.Contains(reason, "not joined yet") || cpus < 1 {
		t.Errorf("location show before the join: %q %q, this host's vCPUs %d", st, reason, cpus)
	}
	// The user runs the command on their machine (here, this host), with
	// their shoal binary.
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", strings.Replace(command, "shoal agent", shoalBin+" agent", 1))
	cmd.Env = append(childEnv(home), "HOME="+home)
	logf, err := os.Create(filepath.Join(home, "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
	}()
	waitFor(t, 20*time.Second, "node "+node+" to join", func() (bool, string) {
		nodes := listNodes(t, s, "own-cluster")
		return len(nodes) == 1 && nodes[0].ID == node && nodes[0].State == "idle", describeNodes(nodes)
	})
	if st, reason, _ := hostState(); st != "ready" {
		t.Errorf("location show after the join: %q %q", st, reason)
	}
	// A job runs on it, without the autoscaler adding a node.
	name := submitJob(t, s, writeJobFile(t, "type: command\ncommand: echo on $SHOAL_NODE_ID\ncompute: azureml:own-cluster\n"))
	waitJob(t, s, name, 30*time.Second, "Completed")
	if log := jobLog(t, s, name); !strings.Contains(log, "on "+node) {
		t.Errorf("the job ran elsewhere: %q", log)
	}
	// Past the idle time (1 s) it stays: the autoscaler never releases it.
	time.Sleep(3 * time.Second)
	if nodes := listNodes(t, s, "own-cluster"); len(nodes) != 1 || nodes[0].ID != node {
		t.Fatalf("after the idle time: %s", describeNodes(nodes))
	}
	// Only nodes added by hand are removed by hand.
	mustRun(t, s.env, "compute", "remove-node", "-n", "own-cluster", "--node", node, "-o", "none")
	waitFor(t, 20*time.Second, "the node to be gone", func() (bool, string) {
		nodes := listNodes(t, s, "own-cluster")
		return len(nodes) == 0, describeNodes(nodes)
	})
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the agent of the removed node did not exit")
	}
	if evs := eventLines(events(t, s, "own-cluster")); !strings.Contains(evs, "node_added") || !strings.Contains(evs, "node_removing") {
		t.Errorf("events:%s", evs)
	}
}

// A static location starts no machines: a job waits, and the cluster's
// events say why and what to do, until a machine is joined by hand.
func TestStaticLocation(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig + "locations:\n  - name: local\n  - name: desks\n    provider: static\n"})
	createCluster(t, s, "desk-cluster", "--location", "desks", "--max-instances", "2")
	name := submitJob(t, s, writeJobFile(t, "type: command\ncommand: echo on $SHOAL_NODE_ID\ncompute: azureml:desk-cluster\n"))
	waitFor(t, 20*time.Second, "the refusal to provision to be an event", func() (bool, string) {
		evs := eventLines(events(t, s, "desk-cluster"))
		return strings.Contains(evs, "location desks is static") && strings.Contains(evs, "add-node"), evs
	})
	if nodes := listNodes(t, s, "desk-cluster"); len(nodes) != 0 {
		t.Fatalf("nodes at a static location: %s", describeNodes(nodes))
	}
	j := runJSON[map[string]any](t, s.env, "compute", "add-node", "-n", "desk-cluster", "-o", "json")
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", strings.Replace(jsonStr(j["command"]), "shoal agent", shoalBin+" agent", 1))
	cmd.Env = append(childEnv(home), "HOME="+home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the shell and the agent it starts
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	waitJob(t, s, name, 60*time.Second, "Completed")
	if log := jobLog(t, s, name); !strings.Contains(log, "on "+jsonStr(j["node_id"])) {
		t.Errorf("the job ran elsewhere: %q", log)
	}
}
