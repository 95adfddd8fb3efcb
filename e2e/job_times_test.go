package e2e_test

import (
	"testing"
	"time"
)

// A job's times are its node's: `sleep 0.3` runs at least 0.3 s from its
// start to its end and costs at least 0.3 node-seconds, however close
// together its node's reports reached the server. Then the cluster is
// deleted and created again under its name: `compute events` and `compute
// show` are the new one's, from its creation on.
func TestJobTimesAndRecreatedCompute(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	createCluster(t, s, "quick", "--size", "Standard_DS3_v2", "--max-instances", "1", "--idle-time-before-scale-down", "1")
	name := submitJob(t, s, writeJobFile(t, "command: sleep 0.3\ncompute: quick\n"))
	j := waitJob(t, s, name, 60*time.Second, "Completed")
	if j.StartTime == nil || j.EndTime == nil {
		t.Fatalf("job %s has no start or end: %+v", name, j)
	}
	if d := j.EndTime.Sub(*j.StartTime); d < 300*time.Millisecond {
		t.Errorf("`sleep 0.3` ran %v from its start (%s) to its end (%s), want at least 0.3 s", d, j.StartTime.Format(time.RFC3339Nano), j.EndTime.Format(time.RFC3339Nano))
	}
	shown := runJSON[map[string]any](t, s.env, "job", "show", "-n", name, "-o", "json")
	if c, _ := shown["cost"].(map[string]any); c == nil || c["node_seconds"].(float64) < 0.3 {
		t.Errorf("`sleep 0.3` cost %v, want at least 0.3 node-seconds", shown["cost"])
	}

	mustRun(t, s.env, "compute", "delete", "-n", "quick", "--yes", "-o", "none")
	createCluster(t, s, "quick", "--size", "Standard_DS3_v2", "--max-instances", "1")
	c := runJSON[map[string]any](t, s.env, "compute", "show", "-n", "quick", "-o", "json")
	created, err := time.Parse(time.RFC3339Nano, jsonStr(c["created_on"]))
	if err != nil {
		t.Fatalf("compute show: created_on %v: %v", c["created_on"], err)
	}
	events := runJSON[[]map[string]any](t, s.env, "compute", "events", "-n", "quick", "-o", "json")
	if len(events) == 0 {
		t.Fatal("the new compute has no events")
	}
	for _, e := range events {
		at, err := time.Parse(time.RFC3339Nano, jsonStr(e["time"]))
		if err != nil || at.Before(created) {
			t.Errorf("the new compute (created %s) shows an event of the old one: %v", created.Format(time.RFC3339Nano), e)
		}
	}
}
