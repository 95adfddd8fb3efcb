package e2e_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tcpExchange is a two-rank program: rank 0 listens on MASTER_PORT, rank
// 1 connects to MASTER_ADDR:MASTER_PORT (retrying while rank 0 starts),
// and each prints what the other sent.
const tcpExchange = `import os, socket, time
addr, port, rank = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), int(os.environ["NODE_RANK"])
print("rank", rank, "of", os.environ["WORLD_SIZE"], "master", addr, port, flush=True)
if rank == 0:
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(1)
    srv.settimeout(60)
    conn, _ = srv.accept()
    print("rank 0 got:", conn.recv(100).decode(), flush=True)
    conn.sendall(b"hello from rank 0")
    conn.close()
else:
    deadline = time.time() + 60
    while True:
        try:
            conn = socket.create_connection((addr, port), timeout=5)
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)
    conn.sendall(b"hello from rank 1")
    print("rank 1 got:", conn.recv(100).decode(), flush=True)
`

// A two-node job in containers: each rank runs in a container of the
// image on its own node, sees MASTER_ADDR and MASTER_PORT, and rank 1
// reaches rank 0 over TCP at them.
func testContainerTwoNodes(t *testing.T, f *ctrFixture) {
	s := f.s
	createCluster(t, s, "ctr-two", "--size", "Standard_DS3_v2", "--max-instances", "2", "--idle-time-before-scale-down", "120")
	dir := writeFiles(t, map[string]string{
		"src/exchange.py": tcpExchange,
		"job.yml": "command: python3 exchange.py\ncode: ./src\ncompute: azureml:ctr-two\n" +
			"environment:\n  image: " + f.image + "\nresources:\n  instance_count: 2\n" +
			"distribution:\n  type: pytorch\n  process_count_per_instance: 1\n",
	})
	name := submitJob(t, s, filepath.Join(dir, "job.yml"))
	j := waitJob(t, s, name, 3*time.Minute, "Completed", "Failed")
	logs := []string{jobLog(t, s, name), jobLog(t, s, name, "--rank", "1")}
	if j.Status != "Completed" {
		t.Fatalf("%v\nrank 0:\n%s\nrank 1:\n%s", j, logs[0], logs[1])
	}
	a := listAttempts(t, s, name)
	if len(a) != 1 || len(a[0].Ranks) != 2 || a[0].Ranks[0].NodeID == a[0].Ranks[1].NodeID {
		t.Fatalf("attempts %+v; want one with its two ranks on two nodes", a)
	}
	for rank, want := range []string{"rank 0 got: hello from rank 1", "rank 1 got: hello from rank 0"} {
		log := logs[rank]
		if !strings.Contains(log, "in a container of "+f.image) || !strings.Contains(log, want) || !strings.Contains(log, " of 2 master ") {
			t.Errorf("rank %d's log lacks the container, the exchange (%q) or the master address:\n%s", rank, want, log)
		}
	}
	for _, r := range a[0].Ranks {
		waitNoContainers(t, f, r.NodeID)
	}
}

// Canceling a job whose rank runs in a container stops it: the job is
// Canceled, the node idle again, and its container is gone.
func testContainerCancel(t *testing.T, f *ctrFixture) {
	s := f.s
	const cluster = "ctr-cancel"
	createCluster(t, s, cluster, "--size", "Standard_DS3_v2", "--max-instances", "1", "--idle-time-before-scale-down", "120")
	name := submitJob(t, s, writeJobFile(t, "command: echo started; sleep 300\ncompute: azureml:"+cluster+"\nenvironment:\n  image: "+f.image+"\n"))
	waitJob(t, s, name, 2*time.Minute, "Running")
	node := currentAttempt(t, s, name).Ranks[0].NodeID
	waitRunningContainer(t, f, node)
	mustRun(t, s.env, "job", "cancel", "-n", name, "-o", "none")
	waitJob(t, s, name, 20*time.Second, "Canceled")
	waitNoContainers(t, f, node)
	waitFor(t, 10*time.Second, "the node to be idle after the cancel", func() (bool, string) {
		nodes := listNodes(t, s, cluster)
		return len(nodes) == 1 && nodes[0].State == "idle", describeNodes(nodes)
	})
}

// Preempting the node of a containerized rank requeues the job without
// spending a retry; it completes on its next attempt, and neither node
// keeps a container.
func testContainerPreempt(t *testing.T, f *ctrFixture) {
	s := f.s
	const cluster = "ctr-lowpri"
	createCluster(t, s, cluster, "--size", "Standard_DS3_v2", "--tier", "low_priority", "--max-instances", "1", "--idle-time-before-scale-down", "120")
	name := submitJob(t, s, writeJobFile(t, "command: >-\n  echo attempt $SHOAL_ATTEMPT;\n  if [ \"$SHOAL_ATTEMPT\" = 1 ]; then sleep 300; fi;\n  echo finished attempt $SHOAL_ATTEMPT\n"+
		"compute: azureml:"+cluster+"\nenvironment:\n  image: "+f.image+"\n"))
	waitJob(t, s, name, 2*time.Minute, "Running")
	node1 := currentAttempt(t, s, name).Ranks[0].NodeID
	waitRunningContainer(t, f, node1)
	mustRun(t, s.env, "compute", "preempt-node", "-n", cluster, "--node", node1, "-o", "none")
	j := waitJob(t, s, name, 2*time.Minute, "Completed")
	if j.AttemptCount != 2 || j.FailedAttempts != 0 || j.InfraRequeues != 1 {
		t.Errorf("%v; want attempt_count 2, failed_attempts 0, infra_requeues 1", j)
	}
	attempts := listAttempts(t, s, name)
	if len(attempts) != 2 || attempts[0].Status != "Preempted" || attempts[1].Status != "Completed" {
		t.Fatalf("attempts:%s; want Preempted, Completed", describeAttempts(attempts))
	}
	if log := jobLog(t, s, name); !strings.Contains(log, "in a container of "+f.image) || !strings.Contains(log, "finished attempt 2") {
		t.Errorf("attempt 2's log:\n%s", log)
	}
	waitNoContainers(t, f, node1)
	waitNoContainers(t, f, attempts[1].Ranks[0].NodeID)
}
