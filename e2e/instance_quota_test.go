package e2e_test

import (
	"strings"
	"testing"
	"time"
)

// Instances share the location's quota with clusters; a stopped instance
// keeps its quota unless release_quota_on_stop, and a start that quota
// cannot serve fails clearly and leaves the instance Stopped.
func TestInstanceQuota(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig + "locations:\n  - name: local\n    quota:\n      total_dedicated_vcpus: 4\n"})
	dedicated := func() int {
		for _, u := range runJSON[[]map[string]any](t, s.env, "compute", "list-usage", "-o", "json") {
			if jsonStr(mapField(u, "name", "value")) == "DedicatedCores" {
				return jsonInt(u["current_value"])
			}
		}
		t.Fatal("no DedicatedCores usage line")
		return 0
	}
	mustRun(t, s.env, "compute", "create", "--name", "q-release", "--type", "computeinstance", "--set", "release_quota_on_stop=true", "-o", "none")
	if n := dedicated(); n != 4 {
		t.Fatalf("dedicated vCPUs with one running instance: %d, want 4", n)
	}
	mustRun(t, s.env, "compute", "stop", "-n", "q-release", "-o", "none")
	if n := dedicated(); n != 0 {
		t.Fatalf("after stopping an instance with release_quota_on_stop: %d vCPUs, want 0", n)
	}
	mustRun(t, s.env, "compute", "create", "--name", "q-keep", "--type", "computeinstance", "-o", "none")
	stderr, _ := mustFail(t, s.env, "compute", "start", "-n", "q-release")
	if !strings.Contains(stderr, "cannot start compute instance") || !strings.Contains(stderr, "quota") {
		t.Errorf("start beyond quota: %s", stderr)
	}
	if v := showInstance(t, s.env, "q-release"); v.State != "Stopped" {
		t.Fatalf("after a refused start: %s", v)
	}
	// A stopped instance keeps its quota by default.
	mustRun(t, s.env, "compute", "stop", "-n", "q-keep", "-o", "none")
	if n := dedicated(); n != 4 {
		t.Fatalf("a stopped instance without release_quota_on_stop holds %d vCPUs, want 4", n)
	}
	if stderr, _ := mustFail(t, s.env, "compute", "start", "-n", "q-release"); !strings.Contains(stderr, "quota") {
		t.Errorf("start while another stopped instance holds the quota: %s", stderr)
	}
	if stderr, _ := mustFail(t, s.env, "compute", "create", "--name", "q-third", "--type", "computeinstance"); !strings.Contains(stderr, "quota") {
		t.Errorf("creating an instance beyond quota: %s", stderr)
	}
	// A cluster cannot take the quota the stopped instance keeps either.
	createCluster(t, s, "q-cluster", "--max-instances", "1")
	name := submitJob(t, s, writeJobFile(t, "type: command\ncommand: echo ok\ncompute: azureml:q-cluster\n"))
	waitFor(t, 15*time.Second, "the job to wait for quota", func() (bool, string) {
		j := getJob(t, s, name)
		return strings.Contains(j.StatusReason, "quota"), j.String()
	})
	mustRun(t, s.env, "compute", "delete", "-n", "q-keep", "--yes")
	waitJob(t, s, name, 60*time.Second, "Completed")
}
