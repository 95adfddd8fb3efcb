package e2e_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testslurm"
)

// A location backed by a Slurm partition (a real slurmctld and slurmd):
// a cluster scales 0 → 2 as pilot jobs, runs jobs on them, and scales
// back with scancel; a pilot cancelled from outside Shoal is a preempted
// node, and its job is requeued without spending a retry and completes.
func TestSlurmPilots(t *testing.T) {
	t.Parallel()
	c := testslurm.New(t, 16, 64000)
	pilots := filepath.Join(t.TempDir(), "pilots")
	registerSuiteDir(pilots + string(filepath.Separator))
	cfg := fastJobsConfig + "locations:\n  - name: local\n" + c.LocationYAML("hpc", pilots)
	// Over HTTPS with a private CA: the pilots get the CA with their join
	// token and verify the server.
	s := startServer(t, serverOpts{Config: cfg, Args: []string{"--tls"}, TLS: true})
	loc := runJSON[map[string]any](t, s.env, "location", "show", "-n", "hpc", "-o", "json")
	if hosts, _ := loc["hosts"].([]any); len(hosts) != 1 || hosts[0].(map[string]any)["name"] != c.Node || hosts[0].(map[string]any)["vcpus"] != float64(16) {
		t.Errorf("location show: hosts %v; want the partition's node %s with 16 CPUs", loc["hosts"], c.Node)
	}
	createCluster(t, s, "slurm-cluster", "--location", "hpc", "--max-instances", "2", "--idle-time-before-scale-down", "2")

	// Two jobs: two pilots, each a node.
	file := writeJobFile(t, "type: command\ncommand: echo on $SHOAL_NODE_ID in Slurm job $SLURM_JOB_ID; sleep 3\ncompute: azureml:slurm-cluster\n")
	names := []string{submitJob(t, s, file), submitJob(t, s, file)}
	for _, n := range names {
		waitJob(t, s, n, 60*time.Second, "Running")
	}
	nodes := listNodes(t, s, "slurm-cluster")
	if len(nodes) != 2 {
		t.Fatalf("nodes %s; want 2", describeNodes(nodes))
	}
	running := livePilots(t, c)
	for _, n := range nodes {
		if running["shoal-"+n.ID] == 0 {
			t.Errorf("node %s has no running pilot job; Slurm runs %v", n.ID, running)
		}
	}
	for _, n := range names {
		waitJob(t, s, n, 60*time.Second, "Completed")
		if log := jobLog(t, s, n); !strings.Contains(log, "in Slurm job ") || strings.Contains(log, "in Slurm job \n") {
			t.Errorf("job %s did not run inside a Slurm job: %q", n, log)
		}
	}
	// Idle for 2 s: both released, their pilots cancelled.
	waitFor(t, 30*time.Second, "the cluster to scale back to 0 and its pilots to end", func() (bool, string) {
		nodes := listNodes(t, s, "slurm-cluster")
		live := livePilots(t, c)
		return len(nodes) == 0 && len(live) == 0, fmt.Sprintf("nodes %s, pilots %v", describeNodes(nodes), live)
	})
	if evs := eventLines(events(t, s, "slurm-cluster")); !strings.Contains(evs, "scale_down") && !strings.Contains(evs, "released") {
		t.Errorf("no release among the events:%s", evs)
	}

	// A pilot cancelled from outside (as an administrator's scancel or
	// Slurm's preemption would): the node is preempted and the job runs
	// again, its retries unspent.
	long := submitJob(t, s, writeJobFile(t, `type: command
command: if [ "$SHOAL_ATTEMPT" = 1 ]; then sleep 120; fi; echo attempt $SHOAL_ATTEMPT done
compute: azureml:slurm-cluster
`))
	waitJob(t, s, long, 60*time.Second, "Running")
	a := currentAttempt(t, s, long)
	id := livePilots(t, c)["shoal-"+a.Ranks[0].NodeID]
	if id == 0 {
		t.Fatalf("node %s has no pilot", a.Ranks[0].NodeID)
	}
	if out, err := c.Command("scancel", fmt.Sprint(id)).CombinedOutput(); err != nil {
		t.Fatalf("scancel: %v %s", err, out)
	}
	j := waitJob(t, s, long, 90*time.Second, "Completed")
	if j.AttemptCount != 2 || j.InfraRequeues != 1 || j.FailedAttempts != 0 {
		t.Errorf("%s; want a second attempt after the preemption, no retry spent", j)
	}
	if atts := listAttempts(t, s, long); len(atts) != 2 || atts[0].Status != "Preempted" || atts[1].Ranks[0].NodeID == atts[0].Ranks[0].NodeID {
		t.Errorf("attempts %+v; want the first Preempted and the second on another node", atts)
	}
	evs := eventLines(events(t, s, "slurm-cluster"))
	if !strings.Contains(evs, "node "+a.Ranks[0].NodeID+": taken back by its provider") {
		t.Errorf("no preemption event for node %s:%s", a.Ranks[0].NodeID, evs)
	}
	if log := jobLog(t, s, long); !strings.Contains(log, "attempt 2 done") {
		t.Errorf("the second attempt's log: %q", log)
	}
}

// livePilots returns the pending and running Slurm jobs by name.
func livePilots(t *testing.T, c *testslurm.Cluster) map[string]int {
	t.Helper()
	out, err := c.Command("squeue", "-h", "--states", "PENDING,RUNNING,CONFIGURING", "-o", "%i|%j").Output()
	if err != nil {
		t.Fatalf("squeue: %v", err)
	}
	jobs := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var id int
		name, sid, ok := strings.Cut(line, "|")
		if _, err := fmt.Sscan(name, &id); ok && err == nil {
			jobs[sid] = id
		}
	}
	return jobs
}
