package e2e_test

import (
	"net"
	"strings"
	"testing"
	"time"
)

// An image on a registry the node cannot reach (the connection refused;
// a name that does not resolve, as Docker Hub's does without a route)
// fails the job at once with the registry's words (`job show`'s error): one
// attempt, no requeue, no retry spent, and the node stays in service.
// It was node loss: twenty requeues in seconds, then "gave up after 20
// requeues for preemption or node loss".
func testContainerPullUnreachable(t *testing.T, f *ctrFixture) {
	s := f.s
	const cluster = "ctr-unreach"
	createCluster(t, s, cluster, "--size", "Standard_DS3_v2", "--max-instances", "1", "--idle-time-before-scale-down", "120")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	for _, c := range []struct{ image, words string }{
		{closed + "/x:1", "connection refused"},
		{"reg1.example.invalid/x:1", "reg1.example.invalid"},
	} {
		j, log := runToEnd(t, s, writeJobFile(t, "command: echo should-not-run\ncompute: azureml:"+cluster+"\nretries: 2\nenvironment:\n  image: "+c.image+"\n"), 2*time.Minute)
		if j.Status != "Failed" || !strings.Contains(j.Error, c.words) || !strings.Contains(j.Error, c.image) {
			t.Errorf("%s: %v; want Failed with the registry's words (%q)", c.image, j, c.words)
		}
		if j.AttemptCount != 1 || j.InfraRequeues != 0 || j.FailedAttempts != 0 {
			t.Errorf("%s: %v; want one attempt, no requeue, no retry spent", c.image, j)
		}
		if strings.Contains(log, "should-not-run") {
			t.Errorf("%s: the command ran:\n%s", c.image, log)
		}
	}
	waitFor(t, 10*time.Second, "the node to be idle after the failed pulls", func() (bool, string) {
		nodes := listNodes(t, s, cluster)
		return len(nodes) == 1 && nodes[0].State == "idle", describeNodes(nodes)
	})
}
