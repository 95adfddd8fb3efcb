package e2e_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testpg"
)

// twoReplicas starts two servers on one PostgreSQL database with extra
// config: a, which leads, and b, which follows. Agents reach b (its URL is
// the advertised one).
func twoReplicas(t *testing.T, extra string) (a, b *server) {
	t.Helper()
	pg := testpg.Start(t)
	url := pg.NewDatabase(t)
	addrA, addrB := freeAddr(t), freeAddr(t)
	cfg := extra + "store: " + url + "\nleader_lease: 2s\nadvertise_url: http://" + addrB + "\n" +
		"secrets_key_file: " + filepath.Join(t.TempDir(), "workload.key") + "\n"
	a = startServer(t, serverOpts{Config: cfg, Addr: addrA})
	waitFor(t, 10*time.Second, "the first server to lead", func() (bool, string) {
		r := readyz(a)
		return r["role"] == "leader", jsonStr(r["role"])
	})
	b = startServer(t, serverOpts{Config: cfg, Addr: addrB})
	if r := readyz(b); r["role"] != "follower" {
		t.Fatalf("the second server is %v, want a follower", r["role"])
	}
	return a, b
}

// via returns a with its users' requests sent to s.
func via(a, s *server) *server {
	out := *a
	out.env = append(slices.Clone(a.env), "SHOAL_SERVER="+s.url)
	return &out
}

// A queued job shown through the replica that does not lead shows the
// wait reason (code and sentence) the leader's scheduler gave it, in
// `job show` and in `job list`, as the leader shows it.
func TestReplicaWaitReason(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t, fastJobsConfig)
	leader, follower := via(a, a), via(a, b)
	createCluster(t, leader, "wr-cluster", "--max-instances", "1", "--idle-time-before-scale-down", "60")
	long := writeJobFile(t, "type: command\ncommand: sleep 120\ncompute: azureml:wr-cluster\n")
	first := submitJob(t, leader, long)
	waitJob(t, leader, first, 60*time.Second, "Running")
	second := submitJob(t, leader, long)
	type shown struct{ Code, Reason string }
	show := func(s *server) shown {
		j := runJSON[map[string]any](t, s.env, "job", "show", "-n", second, "-o", "json")
		return shown{jsonStr(j["status_reason_code"]), jsonStr(j["status_reason"])}
	}
	var want shown
	waitFor(t, 30*time.Second, "the leader to show why "+second+" waits", func() (bool, string) {
		want = show(leader)
		return want.Code == "at_max_instances" && want.Reason != "", want.Code + ": " + want.Reason
	})
	waitFor(t, 20*time.Second, "the follower to show the leader's reason", func() (bool, string) {
		got := show(follower)
		return got == want, got.Code + ": " + got.Reason
	})
	var listed map[string]any
	for _, j := range runJSON[[]map[string]any](t, follower.env, "job", "list", "-o", "json") {
		if j["name"] == second {
			listed = j
		}
	}
	if listed == nil || jsonStr(listed["status_reason_code"]) != want.Code || jsonStr(listed["status_reason"]) != want.Reason {
		t.Errorf("job list through the follower shows %s as %v, want %+v", second, listed, want)
	}
	mustRun(t, leader.env, "job", "cancel", "-n", first, "-o", "none")
}

// An agent long-polls the replica that does not lead, with a poll of
// 30 s (a 90 s node lease): a job submitted through the leader, which
// places it, starts before that poll would have ended on its own. The
// leader's wake reaches the follower's waiting poll through the database.
func TestReplicaWakesAgent(t *testing.T) {
	t.Parallel()
	const poll = 30 * time.Second // node_lease / 3, the most a poll waits
	a, _ := twoReplicas(t, "node_lease: 90s\nnode_lease_grace: 1s\nkill_grace: 1s\n")
	leader := via(a, a)
	createCluster(t, leader, "wake-cluster", "--min-instances", "1", "--max-instances", "1", "--idle-time-before-scale-down", "600")
	heartbeat := func() (time.Time, string) {
		nodes := runJSON[[]map[string]any](t, leader.env, "compute", "list-nodes", "-n", "wake-cluster", "-o", "json")
		if len(nodes) != 1 {
			return time.Time{}, ""
		}
		at, _ := time.Parse(time.RFC3339Nano, jsonStr(nodes[0]["last_heartbeat"]))
		return at, jsonStr(nodes[0]["node_state"])
	}
	var before time.Time
	waitFor(t, 60*time.Second, "the node to be idle", func() (bool, string) {
		var state string
		before, state = heartbeat()
		return strings.EqualFold(state, "idle"), state
	})
	// A poll begins when its sync renews the lease: the next change of
	// the heartbeat is a poll that, unwoken, ends poll later.
	var began time.Time
	waitFor(t, poll+10*time.Second, "the agent to begin a new poll", func() (bool, string) {
		began, _ = heartbeat()
		return began.After(before), began.String()
	})
	file := writeJobFile(t, "type: command\ncommand: echo woken\ncompute: azureml:wake-cluster\n")
	job := submitJob(t, leader, file)
	v := waitJob(t, leader, job, 2*poll, "Completed")
	if v.StartTime == nil || !v.StartTime.Before(began.Add(poll)) {
		t.Errorf("%s started at %v; the agent's poll began at %v and would have ended at %v: the leader's wake did not reach the follower", job, v.StartTime, began, began.Add(poll))
	} else {
		t.Logf("the job started %v after the poll began (it ends after %v)", v.StartTime.Sub(began).Round(time.Millisecond), poll)
	}
}
