package e2e_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tfExchange is a stand-in for tf.distribute: each task reads TF_CONFIG,
// listens at its own address there and reaches every other task at
// theirs, so the job completes only if every address is right and free.
const tfExchange = `import json, os, socket, threading, time
cfg = json.loads(os.environ["TF_CONFIG"])
me = cfg["task"]
tasks = [("worker", i, a) for i, a in enumerate(cfg["cluster"]["worker"])] + [("ps", i, a) for i, a in enumerate(cfg["cluster"].get("ps", []))]
mine = [a for (t, i, a) in tasks if t == me["type"] and i == me["index"]][0]
host, port = mine.rsplit(":", 1)
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", int(port)))
srv.listen(len(tasks))
srv.settimeout(60)
def serve():
    for _ in range(len(tasks) - 1):
        conn, _ = srv.accept()
        conn.sendall(("%s %d" % (me["type"], me["index"])).encode())
        conn.close()
threading.Thread(target=serve, daemon=True).start()
heard = []
for (t, i, a) in tasks:
    if (t, i) == (me["type"], me["index"]):
        continue
    h, p = a.rsplit(":", 1)
    deadline = time.time() + 60
    while True:
        try:
            c = socket.create_connection((h, int(p)), timeout=5)
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)
    heard.append(c.recv(100).decode())
    c.close()
print("task %s %d of %d heard %s" % (me["type"], me["index"], len(tasks), ", ".join(sorted(heard))), flush=True)
time.sleep(1)
`

// TestJobsTensorFlowTwoNodes runs a tensorflow job of 3 workers and a
// parameter server on two nodes: every task finds itself and the others
// in Azure's TF_CONFIG and reaches each of them there.
func TestJobsTensorFlowTwoNodes(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster = "tf-cluster"
	createCluster(t, s, cluster, "--max-instances", "2", "--idle-time-before-scale-down", "60")
	dir := writeFiles(t, map[string]string{
		"src/exchange.py": tfExchange,
		"job.yml": "command: python3 exchange.py\ncode: ./src\ncompute: azureml:" + cluster + "\n" +
			"resources:\n  instance_count: 2\n" +
			"distribution:\n  type: tensorflow\n  worker_count: 3\n  parameter_server_count: 1\n",
	})
	name := submitJob(t, s, filepath.Join(dir, "job.yml"))
	j := waitJob(t, s, name, 2*time.Minute, "Completed", "Failed")
	logs := jobLog(t, s, name) + jobLog(t, s, name, "--rank", "1")
	if j.Status != "Completed" {
		t.Fatalf("%v\n%s", j, logs)
	}
	for _, want := range []string{
		"task worker 0 of 4 heard ps 0, worker 1, worker 2",
		"task worker 1 of 4 heard ps 0, worker 0, worker 2",
		"task worker 2 of 4 heard ps 0, worker 0, worker 1",
		"task ps 0 of 4 heard worker 0, worker 1, worker 2",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the logs lack %q:\n%s", want, logs)
		}
	}
}

// TestJobsTensorFlowOneNode runs two workers on one node, where the job
// may have a network of its own: the tasks reach each other on its
// loopback.
func TestJobsTensorFlowOneNode(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster = "tf-one"
	createCluster(t, s, cluster, "--max-instances", "1", "--idle-time-before-scale-down", "60")
	dir := writeFiles(t, map[string]string{
		"src/exchange.py": tfExchange,
		"job.yml": "command: python3 exchange.py\ncode: ./src\ncompute: azureml:" + cluster + "\n" +
			"distribution:\n  type: tensorflow\n  worker_count: 2\n",
	})
	name := submitJob(t, s, filepath.Join(dir, "job.yml"))
	j := waitJob(t, s, name, 2*time.Minute, "Completed", "Failed")
	logs := jobLog(t, s, name)
	if j.Status != "Completed" {
		t.Fatalf("%v\n%s", j, logs)
	}
	for _, want := range []string{"task worker 0 of 2 heard worker 1", "task worker 1 of 2 heard worker 0"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q:\n%s", want, logs)
		}
	}
}

// A tensorflow job in containers: two nodes, two tasks each, every task
// in a container of the image, reaching the others at TF_CONFIG's
// addresses.
func testContainerTensorFlow(t *testing.T, f *ctrFixture) {
	s := f.s
	createCluster(t, s, "ctr-tf", "--size", "Standard_DS3_v2", "--max-instances", "2", "--idle-time-before-scale-down", "120")
	dir := writeFiles(t, map[string]string{
		"src/exchange.py": tfExchange,
		"job.yml": "command: python3 exchange.py\ncode: ./src\ncompute: azureml:ctr-tf\n" +
			"environment:\n  image: " + f.image + "\nresources:\n  instance_count: 2\n" +
			"distribution:\n  type: tensorflow\n  worker_count: 3\n  parameter_server_count: 1\n",
	})
	name := submitJob(t, s, filepath.Join(dir, "job.yml"))
	j := waitJob(t, s, name, 3*time.Minute, "Completed", "Failed")
	logs := jobLog(t, s, name) + jobLog(t, s, name, "--rank", "1")
	if j.Status != "Completed" {
		t.Fatalf("%v\n%s", j, logs)
	}
	for _, want := range []string{"in a container of " + f.image, "task worker 2 of 4 heard ps 0, worker 0, worker 1", "task ps 0 of 4 heard worker 0, worker 1, worker 2"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the logs lack %q:\n%s", want, logs)
		}
	}
	for _, r := range listAttempts(t, s, name)[0].Ranks {
		waitNoContainers(t, f, r.NodeID)
	}
}
