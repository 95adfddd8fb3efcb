package e2e_test

import (
	"strings"
	"testing"
	"time"
)

// Serverless compute from the CLI against a live server on the local
// provider: a job with no compute creates its pool, scales it from zero
// and completes; `compute list` shows the pool only with
// --include-serverless, `compute show` and the cost report show it; after
// the default idle time (120 s) the pool is back to zero nodes. An
// unknown size is refused at submit naming resources.instance_type.
func TestServerlessJobCLI(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const pool = "sls-ds1v2-std"

	if stderr, _ := mustFail(t, s.env, "job", "create", "-f", writeJobFile(t, "command: echo hi\nresources:\n  instance_type: DS1_v2\n")); !strings.Contains(stderr, "resources.instance_type") || !strings.Contains(stderr, "Standard_DS1_v2") {
		t.Fatalf("unknown size: %s", stderr)
	}

	name := submitJob(t, s, writeJobFile(t, "command: echo serverless-ran\ncompute: azureml:serverless\nqueue_settings:\n  job_tier: standard\n"))
	j := waitJob(t, s, name, 90*time.Second, "Completed")
	if j.Compute != pool {
		t.Fatalf("job ran on %q, want %q", j.Compute, pool)
	}
	if out := jobLog(t, s, name); !strings.Contains(out, "serverless-ran") {
		t.Errorf("job log: %s", out)
	}
	if out := mustRun(t, s.env, "compute", "list", "--query", "[].name", "-o", "tsv"); strings.Contains(out, pool) {
		t.Errorf("compute list shows the pool without --include-serverless: %s", out)
	}
	if out := mustRun(t, s.env, "compute", "list", "--include-serverless", "--query", "[].name", "-o", "tsv"); !strings.Contains(out, pool) {
		t.Errorf("compute list --include-serverless: %s", out)
	}
	c := runJSON[map[string]any](t, s.env, "compute", "show", "-n", pool, "-o", "json")
	if c["serverless"] != true || jsonInt(c["min_instances"]) != 0 || jsonInt(c["idle_time_before_scale_down"]) != 120 {
		t.Errorf("compute show: serverless %v min %v idle %v", c["serverless"], c["min_instances"], c["idle_time_before_scale_down"])
	}
	waitFor(t, 180*time.Second, "the pool back at zero nodes", func() (bool, string) {
		out := mustRun(t, s.env, "compute", "list-nodes", "-n", pool, "--query", "length(@)", "-o", "tsv")
		return strings.TrimSpace(out) == "0", out
	})
	if out := mustRun(t, s.env, "cost", "report", "--since", "1h", "--group-by", "compute", "-o", "tsv"); !strings.Contains(out, pool) {
		t.Errorf("cost report by compute lacks the pool:\n%s", out)
	}
}
