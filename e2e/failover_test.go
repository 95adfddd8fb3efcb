package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testpg"
)

// Two servers on one PostgreSQL database and no load balancer: each
// advertises its own URL, and agents learn both from the one that
// started them. With jobs running, the server the agents talk to — the
// leader, which started them — is killed (kill -9) and never comes back:
// the agents move to the other server before their nodes' leases end,
// it takes the lead, and every job still runs exactly once.
func TestFailoverWithoutLoadBalancer(t *testing.T) {
	t.Parallel()
	pg := testpg.Start(t)
	url := pg.NewDatabase(t)
	cfg := "node_lease: 4s\nnode_lease_grace: 2s\nkill_grace: 1s\nstore: " + url + "\nleader_lease: 2s\n" +
		"secrets_key_file: " + filepath.Join(t.TempDir(), "workload.key") + "\n"
	a := startServer(t, serverOpts{Config: cfg})
	waitFor(t, 10*time.Second, "the first server to lead", func() (bool, string) {
		r := readyz(a)
		return r["role"] == "leader", jsonStr(r["role"])
	})
	b := startServer(t, serverOpts{Config: cfg})
	onB := append(append([]string(nil), a.env...), "SHOAL_SERVER="+b.url)
	usersB := *a
	usersB.env = onB

	createCluster(t, a, "fo-cluster", "--max-instances", "3", "--idle-time-before-scale-down", "120")
	file := writeJobFile(t, "type: command\ncommand: echo ran on $SHOAL_NODE_ID; sleep 3\ncompute: azureml:fo-cluster\n")
	var jobs []string
	for i := range 9 {
		name := fmt.Sprintf("fo-job-%d", i)
		mustRun(t, a.env, "job", "create", "-f", file, "--name", name, "-o", "none")
		jobs = append(jobs, name)
	}
	// Running, or already done (a 3 s job can end between two polls of
	// a loaded machine), with the last job still to run: the kill comes
	// while the agents hold work.
	waitFor(t, time.Minute, "jobs to run on the first server's agents", func() (bool, string) {
		first, last := getJob(t, a, jobs[0]), getJob(t, a, jobs[len(jobs)-1])
		return (first.Status == "Running" || first.Status == "Completed") && last.Status != "Completed", first.Status + ", last " + last.Status
	})
	// Both servers are known to the agents by now (they sync every
	// lease/3 and each answer lists the servers).
	time.Sleep(2 * time.Second)
	a.kill9()
	killed := time.Now()
	waitFor(t, 20*time.Second, "the second server to lead", func() (bool, string) {
		r := readyz(b)
		return r["role"] == "leader", jsonStr(r["role"])
	})
	t.Logf("the second server leads %v after the kill", time.Since(killed).Round(10*time.Millisecond))
	for _, j := range jobs {
		if v := waitJob(t, &usersB, j, 2*time.Minute, "Completed", "Failed", "Canceled"); v.Status != "Completed" || v.AttemptCount != 1 {
			t.Errorf("%s: %s after %d attempt(s), want Completed once", j, v.Status, v.AttemptCount)
		}
	}
	// The agents moved, and said so.
	moved := 0
	logs, _ := filepath.Glob(filepath.Join(a.nodesDir, "fo-cluster-*", "agent.log"))
	for _, l := range logs {
		if b, err := os.ReadFile(l); err == nil && strings.Contains(string(b), "moving to another") {
			moved++
		}
	}
	if moved == 0 {
		t.Errorf("no agent log of %v says it moved to another server", logs)
	}
	for _, n := range listNodes(t, &usersB, "fo-cluster") {
		if n.State == "Unusable" || n.State == "Lost" {
			t.Errorf("node %s is %s: it was declared lost although the second server heard from it", n.ID, n.State)
		}
	}
}
