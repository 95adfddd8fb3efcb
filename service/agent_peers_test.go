package service_test

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/job"
	nodekind "github.com/shoal-ml/shoal/domain/node"
)

// A tensorflow job's ranks are told its tasks and every rank's node
// (host:port, rank order), from which the agent writes TF_CONFIG; the
// nodes split the tasks evenly.
func TestTensorFlowTaskNamesEveryRanksNode(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 2, 120)
	h.submitSpec(&job.JobSpec{Name: "tf", Command: command("tf"), Compute: "cpu",
		Resources:    &job.JobResources{InstanceCount: 2},
		Distribution: &job.Distribution{Type: "TensorFlow", WorkerCount: 3, ParameterServerCount: 1}})
	h.step(0)
	h.step(time.Second)
	ids := h.joinAll()
	if len(ids) != 2 {
		t.Fatalf("joined %v, want 2 nodes", ids)
	}
	n1, n2 := ids[0], ids[1]
	h.step(0)
	var tasks []*nodekind.AgentTask
	for _, n := range []string{n1, n2} {
		tasks = append(tasks, h.syncStart(n)...)
	}
	if len(tasks) != 2 {
		t.Fatalf("tasks: %s", describeTasks(tasks))
	}
	peers := make([]string, 2)
	// tasks[i] is the task node ids[i] was given: its port is that rank's.
	for i, task := range tasks {
		peers[task.Rank] = net.JoinHostPort("127.0.0.1", strconv.Itoa(h.agent([]string{n1, n2}[i]).port))
	}
	for _, task := range tasks {
		if task.Distribution != "tensorflow" || task.WorkerCount != 3 || task.ParameterServerCount != 1 || task.ProcessesPerNode != 2 {
			t.Errorf("rank %d: distribution %q, %d workers, %d ps, %d per node", task.Rank, task.Distribution, task.WorkerCount, task.ParameterServerCount, task.ProcessesPerNode)
		}
		if len(task.Peers) != 2 || task.Peers[0] != peers[0] || task.Peers[1] != peers[1] {
			t.Errorf("rank %d: peers %v, want %v", task.Rank, task.Peers, peers)
		}
	}
}
