package e2e_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestJobsScaleUpAndDown queues 4 jobs on a cluster of 0 to 2 nodes: it
// grows to at most 2 nodes, runs every job, and shrinks back to 0 once its
// nodes have been idle for idle_time_before_scale_down, stopping the agents.
func TestJobsScaleUpAndDown(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	token := s.adminToken(t)
	const cluster, idle = "scale-cluster", 3
	createCluster(t, s, cluster, "--min-instances", "0", "--max-instances", "2", "--idle-time-before-scale-down", strconv.Itoa(idle))

	// Watch the nodes all along: how many exist at once, and which.
	var (
		mu       sync.Mutex
		maxNodes int
		maxSeen  []nodeView
		seen     = map[string]bool{}
		pollErrs int
	)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			nodes, err := apiNodes(s, token, cluster)
			mu.Lock()
			if err != nil {
				pollErrs++
			}
			if len(nodes) > maxNodes {
				maxNodes, maxSeen = len(nodes), nodes
			}
			for _, n := range nodes {
				seen[n.ID] = true
			}
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	stopWatch := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-stopped
	}
	defer stopWatch()

	var names []string
	for range 4 {
		names = append(names, submitJob(t, s, jobFile(t, "hello.yml"), "--compute", cluster))
	}
	jobs := map[string]jobView{}
	for _, name := range names {
		jobs[name] = waitJob(t, s, name, 40*time.Second, "Completed")
	}
	for _, name := range names {
		if j := jobs[name]; j.AttemptCount != 1 || j.ExitCode == nil || *j.ExitCode != 0 {
			t.Errorf("%s; want 1 attempt and exit code 0 (exit code %v)", j, j.ExitCode)
		}
		if log := jobLog(t, s, name); !strings.Contains(log, "hello "+name+"\n") {
			t.Errorf("the log of %s does not hold its hello line:\n%s", name, log)
		}
	}
	if evs := events(t, s, cluster); !hasEventText(evs, "scale 0→") {
		t.Errorf("compute events do not record a scale-up from 0 (\"scale 0→\"):%s", eventLines(evs))
	}

	// Back to 0 nodes once idle.
	waitFor(t, time.Duration(idle)*time.Second+20*time.Second, "the cluster to scale back to 0 nodes", func() (bool, string) {
		nodes := listNodes(t, s, cluster)
		c := show(t, s, cluster)
		return len(nodes) == 0 && jsonInt(c["current_node_count"]) == 0,
			fmt.Sprintf("nodes %s, current_node_count %v", describeNodes(nodes), c["current_node_count"])
	})
	stopWatch()
	mu.Lock()
	if maxNodes > 2 {
		t.Errorf("%d nodes existed at once on a cluster with max_instances 2: %s", maxNodes, describeNodes(maxSeen))
	}
	if maxNodes == 0 {
		t.Errorf("the node watcher never saw a node (%d failed polls)", pollErrs)
	}
	if len(seen) > 2 {
		t.Errorf("%d distinct nodes were started for 4 back-to-back jobs on a max-2 cluster: %v", len(seen), seen)
	}
	mu.Unlock()
	if agents := agentProcs(s.nodesDir); len(agents) > 0 {
		t.Errorf("agent processes still run after the cluster scaled to 0: %v", agents)
	}

	// No node was released before it had been idle for idle_time_before_scale_down:
	// each release decision comes idle s after the end of the last job on that node.
	lastEnd := map[string]time.Time{}
	for _, name := range names {
		for _, a := range listAttempts(t, s, name) {
			for _, r := range a.Ranks {
				if a.EndTime != nil && a.EndTime.After(lastEnd[r.NodeID]) {
					lastEnd[r.NodeID] = *a.EndTime
				}
			}
		}
	}
	if len(lastEnd) == 0 {
		t.Fatalf("the attempts of %v name no node with an end time", names)
	}
	evs := events(t, s, cluster)
	released := 0
	for _, e := range evs {
		reason := jsonStr(e["reason"])
		if jsonStr(e["kind"]) != "scaled" || !strings.Contains(reason, "released") {
			continue
		}
		released++
		at, err := time.Parse(time.RFC3339Nano, jsonStr(e["time"]))
		if err != nil {
			t.Fatalf("event time %v: %v", e["time"], err)
		}
		for node, end := range lastEnd {
			if strings.Contains(reason, "node "+node+" ") && at.Sub(end) < time.Duration(idle)*time.Second-100*time.Millisecond {
				t.Errorf("node %s was released %s after its last job ended, before idle_time_before_scale_down %d s: %s", node, at.Sub(end), idle, reason)
			}
		}
	}
	if released != len(seen) {
		t.Errorf("%d release decisions for %d nodes:%s", released, len(seen), eventLines(evs))
	}
}

// TestJobsMinInstancesKeepsOneNode: with min_instances 1 the cluster starts
// one node at once and keeps exactly one, idle, after its jobs end.
func TestJobsMinInstancesKeepsOneNode(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster, idle = "min-cluster", 2
	createCluster(t, s, cluster, "--min-instances", "1", "--max-instances", "2", "--idle-time-before-scale-down", strconv.Itoa(idle))
	waitFor(t, 15*time.Second, "min_instances 1 to start one idle node", func() (bool, string) {
		nodes := listNodes(t, s, cluster)
		return len(nodes) == 1 && nodes[0].State == "idle", describeNodes(nodes)
	})

	a := submitJob(t, s, jobFile(t, "hello.yml"), "--compute", cluster)
	b := submitJob(t, s, jobFile(t, "hello.yml"), "--compute", cluster)
	waitJob(t, s, a, 30*time.Second, "Completed")
	waitJob(t, s, b, 30*time.Second, "Completed")
	ended := time.Now()

	waitFor(t, time.Duration(idle)*time.Second+15*time.Second, "the cluster to shrink to exactly one idle node", func() (bool, string) {
		nodes := listNodes(t, s, cluster)
		return len(nodes) == 1 && nodes[0].State == "idle" && !nodes[0].Draining, describeNodes(nodes)
	})
	// Well past the idle time, the last node is still there.
	if wait := time.Until(ended.Add(time.Duration(idle)*time.Second + 1500*time.Millisecond)); wait > 0 {
		time.Sleep(wait)
	}
	nodes := listNodes(t, s, cluster)
	if len(nodes) != 1 || nodes[0].State != "idle" {
		t.Errorf("%s after the jobs ended and idle_time_before_scale_down %d s passed: nodes %s, want exactly one idle node",
			time.Since(ended).Round(time.Millisecond), idle, describeNodes(nodes))
	}
	if c := show(t, s, cluster); jsonInt(c["current_node_count"]) != 1 {
		t.Errorf("current_node_count = %v, want 1", c["current_node_count"])
	}
	if agents := agentProcs(s.nodesDir); len(agents) != 1 {
		t.Errorf("%d agent processes run, want 1: %v", len(agents), agents)
	}
	if evs := events(t, s, cluster); !hasEventText(evs, "kept: min_instances") {
		t.Errorf("no compute event says a node was kept for min_instances:%s", eventLines(evs))
	}
}

// TestJobsPyTorchTwoNodes runs a 2-node pytorch job: each node sees the
// distribution variables of its rank and the same master.
func TestJobsPyTorchTwoNodes(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster = "pt-cluster"
	createCluster(t, s, cluster, "--max-instances", "2", "--idle-time-before-scale-down", "60")
	name := submitJob(t, s, jobFile(t, "pytorch.yml"), "--compute", cluster)
	waitJob(t, s, name, 40*time.Second, "Completed")

	attempts := listAttempts(t, s, name)
	if len(attempts) != 1 || len(attempts[0].Ranks) != 2 {
		t.Fatalf("attempts = %+v, want one attempt with 2 ranks", attempts)
	}
	a := attempts[0]
	if a.Ranks[0].NodeID == a.Ranks[1].NodeID {
		t.Errorf("both ranks ran on node %s", a.Ranks[0].NodeID)
	}

	dir := downloadJob(t, s, name)
	envs := make([]map[string]string, 2)
	for rank := range 2 {
		envs[rank] = parseEnvFile(t, filepath.Join(dir, "out", fmt.Sprintf("rank-%d.txt", rank)))
		want := map[string]string{"WORLD_SIZE": "2", "NODE_RANK": strconv.Itoa(rank), "RANK": strconv.Itoa(rank), "LOCAL_RANK": "0"}
		for k, v := range want {
			if envs[rank][k] != v {
				t.Errorf("rank %d sees %s=%q, want %q (all: %v)", rank, k, envs[rank][k], v, envs[rank])
			}
		}
		for _, k := range []string{"MASTER_ADDR", "MASTER_PORT"} {
			if envs[rank][k] == "" {
				t.Errorf("rank %d does not see %s (all: %v)", rank, k, envs[rank])
			}
		}
	}
	for _, k := range []string{"MASTER_ADDR", "MASTER_PORT"} {
		if envs[0][k] != envs[1][k] {
			t.Errorf("the ranks disagree on %s: %q and %q", k, envs[0][k], envs[1][k])
		}
	}
	if envs[0]["MASTER_PORT"] != strconv.Itoa(a.MasterPort) || envs[0]["MASTER_ADDR"] != a.MasterAddr {
		t.Errorf("the job saw MASTER_ADDR:PORT %s:%s, the attempt records %s:%d", envs[0]["MASTER_ADDR"], envs[0]["MASTER_PORT"], a.MasterAddr, a.MasterPort)
	}
	if log := jobLog(t, s, name, "--rank", "1"); !strings.Contains(log, "NODE_RANK=1\n") || !strings.Contains(log, "WORLD_SIZE=2\n") {
		t.Errorf("job stream --rank 1 does not show rank 1's variables:\n%s", log)
	}
	if log := jobLog(t, s, name); !strings.Contains(log, "NODE_RANK=0\n") {
		t.Errorf("job stream (rank 0) does not show rank 0's variables:\n%s", log)
	}
}

// treePIDs reads the pids the tree.yml job wrote.
func treePIDs(t *testing.T, outDir string) map[string]int {
	t.Helper()
	pids := map[string]int{}
	for _, f := range []string{"shell", "bg", "stubborn"} {
		pids[f] = readPIDFile(t, filepath.Join(outDir, "out", f+".pid"))
	}
	return pids
}

// TestJobsTimeoutKillsProcessTree: limits.timeout ends a job Failed, and
// every process it started is gone. The whole tree ignores SIGTERM, so it
// ends by SIGKILL after kill_grace (1 s).
func TestJobsTimeoutKillsProcessTree(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster = "timeout-cluster"
	createCluster(t, s, cluster, "--max-instances", "1", "--idle-time-before-scale-down", "60")
	name := submitJob(t, s, jobFile(t, "tree.yml"), "--compute", cluster, "--set", "limits.timeout=2", "--set", "environment_variables.IGNORE_TERM=1")
	j := waitJob(t, s, name, 30*time.Second, "Failed")
	// Read the pids first: they are checked against the state at the end.
	pids := treePIDs(t, downloadJob(t, s, name))
	assertPIDsGone(t, name, pids, 5*time.Second)
	if left := jobProcs(s.nodesDir, name); len(left) > 0 {
		t.Errorf("processes of %s are left: %v", name, left)
	}

	if !strings.Contains(j.Error, "timeout") {
		t.Errorf("error %q does not mention the timeout", j.Error)
	}
	if j.StartTime == nil || j.EndTime == nil {
		t.Fatalf("%s has no start or end time", j)
	}
	// timeout 2 s, then SIGTERM (ignored), then SIGKILL after kill_grace 1 s
	// (the default kill grace would be 10 s).
	if d := j.EndTime.Sub(*j.StartTime); d < 2800*time.Millisecond || d > 8*time.Second {
		t.Errorf("the job ran %s with limits.timeout 2 s and kill_grace 1 s; want about 3 s", d)
	}
	attempts := listAttempts(t, s, name)
	if len(attempts) != 1 || attempts[0].Status != "TimedOut" {
		t.Errorf("attempts = %+v, want one TimedOut attempt", attempts)
	}
	if log := jobLog(t, s, name); !strings.Contains(log, "started") {
		t.Errorf("the job's log lacks its output:\n%s", log)
	}
}

// TestJobsCancelKillsProcessTree: `job cancel` ends a running job Canceled
// and every process it started is gone.
func TestJobsCancelKillsProcessTree(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster = "cancel-cluster"
	createCluster(t, s, cluster, "--max-instances", "1", "--idle-time-before-scale-down", "60")
	name := submitJob(t, s, jobFile(t, "tree.yml"), "--compute", cluster)
	waitJob(t, s, name, 30*time.Second, "Running")
	a := currentAttempt(t, s, name)
	out := attemptOutputs(s, a.Ranks[0].NodeID, a.ID)
	waitFor(t, 10*time.Second, "the job to write its pids", func() (bool, string) {
		_, err := os.Stat(filepath.Join(out, "out", "stubborn.pid"))
		return err == nil, fmt.Sprint(err)
	})
	pids := treePIDs(t, out)
	for what, pid := range pids {
		if !pidAlive(pid, name) {
			t.Fatalf("%s pid %d of the running job is not alive before the cancel", what, pid)
		}
	}

	mustRun(t, s.env, "job", "cancel", "-n", name, "-o", "none")
	j := waitJob(t, s, name, 20*time.Second, "Canceled")
	assertPIDsGone(t, name, pids, 5*time.Second)
	if left := jobProcs(s.nodesDir, name); len(left) > 0 {
		t.Errorf("processes of %s are left: %v", name, left)
	}
	if attempts := listAttempts(t, s, name); len(attempts) != 1 || attempts[0].Status != "Canceled" {
		t.Errorf("attempts = %+v, want one Canceled attempt", attempts)
	}
	if j.EndTime == nil {
		t.Errorf("%s has no end time", j)
	}
	// The node is free again, not lost.
	waitFor(t, 10*time.Second, "the node to be idle after the cancel", func() (bool, string) {
		nodes := listNodes(t, s, cluster)
		return len(nodes) == 1 && nodes[0].State == "idle", describeNodes(nodes)
	})
}

// TestJobsPreemption preempts the node of a running job on a low-priority
// cluster: the job is requeued without spending its retries, resumes on a
// new node with the checkpoint of attempt 1 restored, and completes.
func TestJobsPreemption(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster = "lowpri-cluster"
	createCluster(t, s, cluster, "--tier", "low_priority", "--max-instances", "1", "--idle-time-before-scale-down", "60")
	name := submitJob(t, s, jobFile(t, "checkpoint.yml"), "--compute", cluster)
	waitJob(t, s, name, 30*time.Second, "Running")
	a1 := currentAttempt(t, s, name)
	node1 := a1.Ranks[0].NodeID
	waitFor(t, 10*time.Second, "attempt 1 to write its checkpoint", func() (bool, string) {
		_, err := os.Stat(filepath.Join(attemptOutputs(s, node1, a1.ID), "out", "ckpt-1"))
		return err == nil, fmt.Sprint(err)
	})

	out := mustRun(t, s.env, "compute", "preempt-node", "-n", cluster, "--node", node1, "-o", "json")
	if n := decodeJSON[nodeView](t, out); n.State != "preempted" {
		t.Errorf("preempt-node printed node_state %q, want preempted", n.State)
	}
	j := waitJob(t, s, name, 45*time.Second, "Completed")
	if j.AttemptCount != 2 || j.FailedAttempts != 0 || j.InfraRequeues != 1 {
		t.Errorf("%s; want attempt_count 2, failed_attempts 0, infra_requeues 1", j)
	}
	attempts := listAttempts(t, s, name)
	if len(attempts) != 2 {
		t.Fatalf("%d attempts, want 2: %+v", len(attempts), attempts)
	}
	if attempts[0].Status != "Preempted" || attempts[1].Status != "Completed" {
		t.Errorf("attempt statuses %s, %s; want Preempted, Completed", attempts[0].Status, attempts[1].Status)
	}
	if n2 := attempts[1].Ranks[0].NodeID; n2 == node1 {
		t.Errorf("attempt 2 ran on the preempted node %s", n2)
	}
	log := jobLog(t, s, name)
	if !strings.Contains(log, "outputs of attempt 2:") || !strings.Contains(log, "ckpt-1\n") || !strings.Contains(log, "ckpt-2\n") {
		t.Errorf("the log of attempt 2 does not list ckpt-1 and ckpt-2 in its outputs:\n%s", log)
	}
	dir := downloadJob(t, s, name)
	for _, f := range []string{"ckpt-1", "ckpt-2"} {
		if _, err := os.Stat(filepath.Join(dir, "out", f)); err != nil {
			t.Errorf("the downloaded outputs lack %s: %v", f, err)
		}
	}
	if evs := events(t, s, cluster); !hasEventText(evs, "preempted") {
		t.Errorf("compute events do not record the preemption:%s", eventLines(evs))
	}
	// The preempted node goes away.
	waitFor(t, 15*time.Second, "the preempted node to be released", func() (bool, string) {
		nodes := listNodes(t, s, cluster)
		return !slices.Contains(nodeIDs(nodes), node1), describeNodes(nodes)
	})
	if pid, ok := agentProcs(s.nodesDir)[node1]; ok {
		t.Errorf("the agent of the preempted node %s still runs (pid %d)", node1, pid)
	}
}

// TestJobsServerKill9 kills the server with SIGKILL while jobs run and
// restarts it on the same port: the agents keep running the jobs, each job
// completes exactly once, and the server adopts the running agents instead
// of starting new ones.
func TestJobsServerKill9(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster = "crash-cluster"
	createCluster(t, s, cluster, "--max-instances", "4", "--idle-time-before-scale-down", "120")
	runLog := filepath.Join(sharedDir(t), "runs.log") // jobs run as accounts of their own
	file := writeJobFile(t, `type: command
command: echo "$SHOAL_JOB_NAME $SHOAL_ATTEMPT $SHOAL_NODE_ID" >> "$RUNLOG"; echo start; sleep $SECONDS_TO_RUN; echo done
environment_variables:
  RUNLOG: `+runLog+`
  SECONDS_TO_RUN: "12"
compute: azureml:`+cluster+"\n")
	// Three jobs of 12 s are still running when the server comes back; a
	// fourth of 2 s ends while the server is down and reports when it is back.
	var names []string
	for range 3 {
		names = append(names, submitJob(t, s, file))
	}
	names = append(names, submitJob(t, s, file, "--set", "environment_variables.SECONDS_TO_RUN=2"))
	for _, name := range names {
		waitJob(t, s, name, 30*time.Second, "Running")
	}
	nodesBefore := nodeIDs(listNodes(t, s, cluster))
	agentsBefore := agentProcs(s.nodesDir)
	if len(nodesBefore) != 4 || len(agentsBefore) != 4 {
		t.Fatalf("before the crash: nodes %v, agents %v; want 4 of each", nodesBefore, agentsBefore)
	}

	if j := getJob(t, s, names[3]); j.Status != "Running" {
		t.Logf("the 2 s job was no longer running when the server was killed: %s", j)
	}
	s.kill9()
	// Stay down longer than lease + grace: the agents must not be declared
	// lost for the server's own absence.
	time.Sleep(6500 * time.Millisecond)
	s.restart()

	for _, name := range names {
		j := waitJob(t, s, name, 30*time.Second, "Completed")
		if j.AttemptCount != 1 || j.InfraRequeues != 0 {
			t.Errorf("%s; want exactly one attempt", j)
		}
		if attempts := listAttempts(t, s, name); len(attempts) != 1 || attempts[0].Status != "Completed" {
			t.Errorf("attempts of %s = %+v, want one Completed", name, attempts)
		}
		if log := jobLog(t, s, name); strings.Count(log, "start\n") != 1 || strings.Count(log, "done\n") != 1 {
			t.Errorf("the log of %s should hold start and done once:\n%s", name, log)
		}
	}
	b, err := os.ReadFile(runLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if n := strings.Count(string(b), name+" "); n != 1 {
			t.Errorf("job %s ran %d times, want 1; runs:\n%s", name, n, b)
		}
	}
	if after := nodeIDs(listNodes(t, s, cluster)); !slices.Equal(after, nodesBefore) {
		t.Errorf("nodes after the restart %v, before %v; want the same nodes", after, nodesBefore)
	}
	if after := agentProcs(s.nodesDir); !maps.Equal(after, agentsBefore) {
		t.Errorf("agent processes after the restart %v, before %v; want the same processes", after, agentsBefore)
	}
	if evs := events(t, s, cluster); hasEventText(evs, "node_lost") || strings.Count(eventLines(evs), " node_ready ") != 4 {
		t.Errorf("the restart lost or re-created nodes:%s", eventLines(evs))
	}
}

// TestJobsAgentKill9 kills a node's agent with SIGKILL while its job runs:
// the node misses its lease, is declared unusable, the job is requeued
// without spending retries and completes on another node, and the
// processes the dead agent left are killed.
func TestJobsAgentKill9(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster = "lease-cluster"
	createCluster(t, s, cluster, "--max-instances", "2", "--idle-time-before-scale-down", "60")
	name := submitJob(t, s, jobFile(t, "lease.yml"), "--compute", cluster)
	waitJob(t, s, name, 30*time.Second, "Running")
	a1 := currentAttempt(t, s, name)
	node1 := a1.Ranks[0].NodeID
	pid := readPIDFile(t, filepath.Join(s.nodesDir, node1, "agent.pid"))
	if got := agentProcs(s.nodesDir)[node1]; got != pid {
		t.Fatalf("agent.pid of %s says %d, the agent process is %d", node1, pid, got)
	}
	var orphans []procInfo
	waitFor(t, 10*time.Second, "the job's sleep to start", func() (bool, string) {
		orphans = jobProcs(s.nodesDir, name)
		return slices.ContainsFunc(orphans, func(p procInfo) bool { return strings.HasPrefix(p.cmdline, "sleep") }), fmt.Sprint(orphans)
	})

	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	// lease 3 s + grace 3 s, plus a controller tick and some slack.
	const bound = 6*time.Second + 4*time.Second
	waitFor(t, 20*time.Second, "node "+node1+" to be declared unusable or removed", func() (bool, string) {
		nodes := listNodes(t, s, cluster)
		i := slices.IndexFunc(nodes, func(n nodeView) bool { return n.ID == node1 })
		return i < 0 || nodes[i].State == "unusable", describeNodes(nodes)
	})
	if d := time.Since(killed); d > bound {
		t.Errorf("node %s was noticed lost %s after its agent died; lease + grace is 6 s", node1, d.Round(time.Millisecond))
	}

	j := waitJob(t, s, name, 30*time.Second, "Completed")
	if j.AttemptCount != 2 || j.FailedAttempts != 0 || j.InfraRequeues != 1 {
		t.Errorf("%s; want attempt_count 2, failed_attempts 0, infra_requeues 1", j)
	}
	attempts := listAttempts(t, s, name)
	if len(attempts) != 2 {
		t.Fatalf("%d attempts, want 2: %+v", len(attempts), attempts)
	}
	if attempts[0].Status != "Lost" || !strings.Contains(attempts[0].Reason, "lease") {
		t.Errorf("attempt 1: status %s, reason %q; want Lost with a reason naming the lease", attempts[0].Status, attempts[0].Reason)
	}
	if attempts[1].Status != "Completed" || attempts[1].Ranks[0].NodeID == node1 {
		t.Errorf("attempt 2: status %s on %s; want Completed on another node than %s", attempts[1].Status, attempts[1].Ranks[0].NodeID, node1)
	}
	if log := jobLog(t, s, name); !strings.Contains(log, "attempt 2 on") || !strings.Contains(log, "ok\n") {
		t.Errorf("the log of attempt 2:\n%s", log)
	}

	// The lost node is released, and with it what its dead agent left running.
	waitFor(t, 15*time.Second, "the lost node "+node1+" to be released", func() (bool, string) {
		nodes := listNodes(t, s, cluster)
		return !slices.Contains(nodeIDs(nodes), node1), describeNodes(nodes)
	})
	pids := map[string]int{}
	for _, p := range orphans {
		pids[p.cmdline] = p.pid
	}
	assertPIDsGone(t, name, pids, 5*time.Second)
}

// TestJobsRefusedAndQueued: a job bigger than the cluster and a job on an
// unknown compute are refused at submission; queued jobs say why they wait.
func TestJobsRefusedAndQueued(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig + "locations:\n  - name: local\n    provisioning_delay: 2s\n"})
	const cluster = "queue-cluster"
	createCluster(t, s, cluster, "--max-instances", "1", "--idle-time-before-scale-down", "60")

	stderr, code := mustFail(t, s.env, "job", "create", "-f", jobFile(t, "hello.yml"), "--compute", cluster, "-n", "too-big", "--set", "resources.instance_count=3")
	if code != 1 || !strings.Contains(stderr, "instance_count") {
		t.Errorf("a 3-node job on a max-1 cluster: exit code %d, stderr %q; want 1 naming instance_count", code, stderr)
	}
	stderr, code = mustFail(t, s.env, "job", "create", "-f", jobFile(t, "hello.yml"), "--compute", "no-such-cluster", "-n", "nowhere")
	if code != 1 || !strings.Contains(stderr, "compute") || !strings.Contains(stderr, "no-such-cluster") {
		t.Errorf("a job on an unknown compute: exit code %d, stderr %q; want 1 naming the compute", code, stderr)
	}
	if jobs := runJSON[[]jobView](t, s.env, "job", "list", "-o", "json"); len(jobs) != 0 {
		t.Errorf("refused jobs were recorded: %v", jobs)
	}

	var names []string
	for range 3 {
		names = append(names, submitJob(t, s, jobFile(t, "sleep5.yml"), "--compute", cluster))
	}
	const initial = "queued: waiting for the scheduler"
	// The first job waits for its node (2 s provisioning delay).
	sawProvision := ""
	waitFor(t, 10*time.Second, "job "+names[0]+" to say it waits for provisioning", func() (bool, string) {
		j := getJob(t, s, names[0])
		if j.Status == "Queued" && strings.Contains(j.StatusReason, "provision") {
			sawProvision = j.StatusReason
		}
		return sawProvision != "" || j.Status != "Queued", j.String()
	})
	if sawProvision == "" {
		t.Errorf("job %s left the queue without a status_reason naming the provisioning", names[0])
	}
	// The last one waits behind the others, or for the cluster at max_instances.
	waitFor(t, 10*time.Second, "job "+names[2]+" to say why it waits", func() (bool, string) {
		j := getJob(t, s, names[2])
		if j.Status != "Queued" {
			t.Fatalf("job %s left the queue while two 5 s jobs are ahead of it on a 1-node cluster: %s", names[2], j)
		}
		r := j.StatusReason
		return r != "" && r != initial, j.String()
	})
	j := getJob(t, s, names[2])
	t.Logf("status_reason of the first queued job: %q; of the third: %q", sawProvision, j.StatusReason)
	if r := j.StatusReason; !strings.Contains(r, "provision") && !strings.Contains(r, "max_instances") && !strings.Contains(r, "behind") {
		t.Errorf("queued job %s: status_reason %q names neither provisioning, max_instances nor the jobs ahead", j.Name, r)
	}
	// `job list -o table` shows the reason too.
	if table := mustRun(t, s.env, "job", "list", "-o", "table"); !strings.Contains(table, j.StatusReason[:min(len(j.StatusReason), 20)]) {
		t.Errorf("job list -o table does not show the reason %q:\n%s", j.StatusReason, table)
	}
	// A queued job is canceled at once.
	mustRun(t, s.env, "job", "cancel", "-n", names[2], "-o", "none")
	if j := getJob(t, s, names[2]); j.Status != "Canceled" || j.AttemptCount != 0 {
		t.Errorf("a queued job after cancel: %s; want Canceled with no attempt", j)
	}
}

// TestJobsIdempotentSubmission: submitting the same named job twice gives
// one job; the same name with another definition is refused; `job
// update` changes its tags and description only.
func TestJobsIdempotentSubmission(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster = "idem-cluster"
	createCluster(t, s, cluster, "--max-instances", "1", "--idle-time-before-scale-down", "60")
	file := jobFile(t, "fixed-name.yml")
	first := runJSON[jobView](t, s.env, "job", "create", "-f", file, "--compute", cluster, "-o", "json")
	second := runJSON[jobView](t, s.env, "job", "create", "-f", file, "--compute", cluster, "-o", "json")
	if first.Name != "fixed-name" || second.Name != "fixed-name" || !first.CreatedOn.Equal(second.CreatedOn) {
		t.Errorf("two submissions gave %s (created %s) and %s (created %s); want the same job fixed-name", first.Name, first.CreatedOn, second.Name, second.CreatedOn)
	}
	jobs := runJSON[[]jobView](t, s.env, "job", "list", "-o", "json")
	if len(jobs) != 1 || jobs[0].Name != "fixed-name" {
		t.Errorf("job list after submitting twice = %v, want the one job fixed-name", jobs)
	}

	other := writeJobFile(t, "type: command\nname: fixed-name\ncommand: echo something else\ncompute: azureml:"+cluster+"\n")
	stderr, code := mustFail(t, s.env, "job", "create", "-f", other)
	if code != 1 || !strings.Contains(stderr, "already exists") {
		t.Errorf("the same name with another command: exit code %d, stderr %q; want 1 with \"already exists\"", code, stderr)
	}
	j := waitJob(t, s, "fixed-name", 30*time.Second, "Completed")
	if j.Command != "echo fixed; sleep 1" || j.AttemptCount != 1 {
		t.Errorf("%s, command %q; want the first definition, run once", j, j.Command)
	}
	if jobs := runJSON[[]jobView](t, s.env, "job", "list", "-o", "json"); len(jobs) != 1 {
		t.Errorf("%d jobs after the refused submission, want 1", len(jobs))
	}
	// `shoal job update`, as `az ml job update`: an ended job's tags and
	// description change, nothing else may.
	upd := runJSON[map[string]any](t, s.env, "job", "update", "-n", "fixed-name", "--set", "tags.reviewed=yes", "--set", "description=checked", "-o", "json")
	if tags, _ := upd["tags"].(map[string]any); tags["reviewed"] != "yes" || upd["description"] != "checked" || upd["status"] != "Completed" {
		t.Errorf("job update answered %v", upd)
	}
	if stderr, code := mustFail(t, s.env, "job", "update", "-n", "fixed-name", "--set", "command=echo changed"); code != 1 || !strings.Contains(stderr, "command") {
		t.Errorf("job update --set command: exit code %d, stderr %q; want 1 naming command", code, stderr)
	}
}
