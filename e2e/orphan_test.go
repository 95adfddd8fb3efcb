package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAgentOutlivesAbsentServer is the scenario of an agent whose server
// is gone: the server is killed while a job runs and stays down past the
// agents' orphan timeout. The job finishes on its node, the agent keeps
// its result in the work dir, writes a short log and exits. When the
// server comes back it revives the node on that work dir: the result is
// reported, the job is Completed exactly once with its exit code, end time
// and outputs, and the node is then released with nothing left running.
func TestAgentOutlivesAbsentServer(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig + "agent_orphan_timeout: 3s\n"})
	const cluster = "orphan-cluster"
	createCluster(t, s, cluster, "--max-instances", "1", "--idle-time-before-scale-down", "1")
	runLog := filepath.Join(sharedDir(t), "runs.log") // jobs run as accounts of their own
	file := writeJobFile(t, `type: command
command: echo "$SHOAL_JOB_NAME $SHOAL_ATTEMPT" >> "$RUNLOG"; echo start; sleep 3; echo weights > ${{outputs.model}}/model.txt; echo done
environment_variables:
  RUNLOG: `+runLog+`
outputs:
  model:
    type: uri_folder
compute: azureml:`+cluster+"\n")
	name := submitJob(t, s, file)
	waitJob(t, s, name, 30*time.Second, "Running")
	nodes := listNodes(t, s, cluster)
	if len(nodes) != 1 {
		t.Fatalf("nodes %s, want one", describeNodes(nodes))
	}
	node := nodes[0].ID
	nodeDir := filepath.Join(s.nodesDir, node)
	killedAt := time.Now()
	s.kill9()

	// The job ends about 3 s in; the agent gives up 3 s after its last
	// contact with the server once nothing runs.
	waitFor(t, 40*time.Second, "the agent of "+node+" to exit", func() (bool, string) {
		procs := agentProcs(s.nodesDir)
		_, alive := procs[node]
		return !alive, "agent still running"
	})
	exitedAfter := time.Since(killedAt)
	results, _ := filepath.Glob(filepath.Join(nodeDir, "results", "*.json"))
	if len(results) != 1 {
		t.Fatalf("results kept in %s: %v; want the job's one result", nodeDir, results)
	}
	agentLog, err := os.ReadFile(filepath.Join(nodeDir, "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(agentLog), "\n"); n > 25 {
		t.Errorf("the agent wrote %d log lines in %s without its server; want a short log:\n%s", n, exitedAfter.Round(time.Second), agentLog)
	}
	if !strings.Contains(string(agentLog), "nothing running; exiting") || !strings.Contains(string(agentLog), "results_waiting=1") {
		t.Errorf("the agent's log does not say why it exited and what it kept:\n%s", agentLog)
	}
	// Stay down a little longer: a server away for any time loses nothing.
	time.Sleep(time.Second)
	s.restart()
	restartedAt := time.Now()

	j := waitJob(t, s, name, 30*time.Second, "Completed")
	if j.AttemptCount != 1 || j.InfraRequeues != 0 || j.FailedAttempts != 0 {
		t.Errorf("%s; want exactly one attempt", j)
	}
	if j.ExitCode == nil || *j.ExitCode != 0 {
		t.Errorf("exit code %v, want 0", j.ExitCode)
	}
	if j.EndTime == nil || !j.EndTime.Before(restartedAt) {
		t.Errorf("end time %v; want the time the job really ended, before the restart at %v", j.EndTime, restartedAt)
	}
	if attempts := listAttempts(t, s, name); len(attempts) != 1 || attempts[0].Status != "Completed" {
		t.Errorf("attempts %+v, want one Completed", attempts)
	}
	if log := jobLog(t, s, name); strings.Count(log, "start\n") != 1 || strings.Count(log, "done\n") != 1 {
		t.Errorf("the job's log should hold start and done once:\n%s", log)
	}
	out := downloadJob(t, s, name)
	if b, err := os.ReadFile(filepath.Join(out, "model", "model.txt")); err != nil || string(b) != "weights\n" {
		t.Errorf("output model/model.txt: %q, %v", b, err)
	}
	if b, err := os.ReadFile(runLog); err != nil || strings.Count(string(b), name+" ") != 1 {
		t.Errorf("the job ran more than once or not at all: %q %v", b, err)
	}
	if evs := events(t, s, cluster); !hasEventText(evs, "node_revived") {
		t.Errorf("no node_revived event:%s", eventLines(evs))
	}
	// Then the idle node is released and nothing is left behind.
	waitFor(t, 30*time.Second, "the node to be released", func() (bool, string) {
		nodes := listNodes(t, s, cluster)
		return len(nodes) == 0, describeNodes(nodes)
	})
	waitFor(t, 10*time.Second, "no agent or job process left", func() (bool, string) {
		agents, jobs := agentProcs(s.nodesDir), jobProcs(s.nodesDir, name)
		return len(agents) == 0 && len(jobs) == 0, fmt.Sprintf("agents %v, job processes %v", agents, jobs)
	})
	if results, _ := filepath.Glob(filepath.Join(nodeDir, "results", "*.json")); len(results) != 0 {
		t.Errorf("results left after they were reported: %v", results)
	}
}
