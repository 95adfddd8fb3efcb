package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `shoal sim` replays a trace file and a live server's own history.
func TestSim(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.csv")
	writeFile(t, trace, "submit_time,duration,instance_count\n0,600,1\n30,600,1\n700,60,2\n1500,60,1\n")
	plot := filepath.Join(dir, "plot.svg")
	waits := filepath.Join(dir, "waits.csv")
	res := runJSON[[]map[string]any](t, s.env, "sim", "--trace", trace, "--provision-delay", "3m", "--sweep", "0s,120s,1800s,adaptive", "--plot", plot, "--waits", waits, "-o", "json")
	if len(res) != 4 || res[0]["policy"] != "fixed:0s" || res[3]["policy"] != "adaptive" {
		t.Fatalf("sweep: %v", res)
	}
	for _, r := range res {
		if r["jobs"] != float64(4) || r["node_hours"].(float64) <= 0 {
			t.Errorf("result %v", r)
		}
	}
	// A longer idle timeout keeps the node for the job at 700 s: less wait.
	if res[2]["wait_mean_s"].(float64) >= res[0]["wait_mean_s"].(float64) {
		t.Errorf("1800 s waits no less than 0 s: %v vs %v", res[2]["wait_mean_s"], res[0]["wait_mean_s"])
	}
	// Every job's wait: the first job waits for a node (180 s) under every
	// policy; the one at 1500 s finds a node kept idle only at 1800 s.
	if b, err := os.ReadFile(waits); err != nil || !strings.HasPrefix(string(b), "job,submit_s,fixed:0s,fixed:120s,fixed:1800s,adaptive\njob-2,0,180,180,180,180\n") ||
		!strings.Contains(string(b), "\njob-5,1500,180,180,0,") {
		t.Errorf("--waits: %v\n%s", err, b)
	}
	if r := res[0]; r["busy_node_hours"].(float64) <= 0 || r["busy_node_hours"].(float64) > r["node_hours"].(float64) {
		t.Errorf("busy node-hours %v of %v", r["busy_node_hours"], r["node_hours"])
	}
	if b, err := os.ReadFile(plot); err != nil || !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "adaptive") {
		t.Errorf("plot: %v", err)
	}
	stderr, _ := mustFail(t, s.env, "sim", "--trace", trace, "--idle-policy", "sometimes")
	if !strings.Contains(stderr, "--idle-policy") {
		t.Errorf("a bad policy: %s", stderr)
	}

	// A cluster YAML's own adaptive policy (as `compute show` prints it)
	// is what replays by default.
	ad := filepath.Join(dir, "adaptive.yml")
	writeFile(t, ad, "name: ad\ntype: amlcompute\nsize: Standard_DS3_v2\nidle_time_before_scale_down: adaptive\nwait_cost_per_hour: 2\n")
	if r := runJSON[[]map[string]any](t, s.env, "sim", "--trace", trace, "--cluster", ad, "-o", "json"); len(r) != 1 || r[0]["policy"] != "adaptive" || r[0]["cost"].(float64) <= 0 {
		t.Errorf("--cluster with idle_time_before_scale_down: adaptive replays %v", r)
	}
	if stderr, _ := mustFail(t, s.env, "sim", "--trace", trace, "--provision-delay", "-1s"); !strings.Contains(stderr, "must not be negative") {
		t.Errorf("a negative provisioning delay: %s", stderr)
	}

	// The server's own history: two jobs run, then replayed.
	mustRun(t, s.env, "compute", "create", "--name", "hist", "--size", "Standard_DS3_v2", "--max-instances", "2", "-o", "none")
	for range 2 {
		mustRun(t, s.env, "job", "create", "-f", writeJobFile(t, "command: sleep 1\ncompute: hist\n"), "-o", "none")
	}
	waitFor(t, 60e9, "both jobs completed", func() (bool, string) {
		out := mustRun(t, s.env, "job", "list", "--status", "Completed", "--query", "length(@)", "-o", "tsv")
		return strings.TrimSpace(out) == "2", out
	})
	// The idle policy changes from the command line both ways.
	mustRun(t, s.env, "compute", "update", "-n", "hist", "--idle-time-before-scale-down", "adaptive", "-o", "none")
	if c := runJSON[map[string]any](t, s.env, "compute", "show", "-n", "hist", "-o", "json"); c["idle_policy"] != "adaptive" {
		t.Errorf("after update to adaptive: idle_policy %v", c["idle_policy"])
	}
	mustRun(t, s.env, "compute", "update", "-n", "hist", "--idle-time-before-scale-down", "300", "-o", "none")
	if c := runJSON[map[string]any](t, s.env, "compute", "show", "-n", "hist", "-o", "json"); c["idle_policy"] != nil || c["idle_time_before_scale_down"] != float64(300) {
		t.Errorf("after update to 300: idle_policy %v, idle_time_before_scale_down %v", c["idle_policy"], c["idle_time_before_scale_down"])
	}
	hist := runJSON[[]map[string]any](t, s.env, "sim", "--from-history", "--idle-policy", "fixed:120s", "-o", "json")
	// The history's own row first: the waits the jobs really had (the
	// local provider starts a node in seconds), then the replay, whose
	// new nodes take --provision-delay (3m).
	if len(hist) != 2 || hist[0]["policy"] != "history" || hist[0]["jobs"] != float64(2) || hist[1]["jobs"] != float64(2) {
		t.Fatalf("--from-history: %v", hist)
	}
	if real, replay := hist[0]["wait_max_s"].(float64), hist[1]["wait_max_s"].(float64); real >= 60 || replay < 180 {
		t.Errorf("waits: history %vs, replay %vs; want the real ones (seconds) and the replay's provision delay", real, replay)
	}
	// The same history exported to a file.
	export := filepath.Join(dir, "history.json")
	mustRun(t, s.env, "job", "export", "-f", export)
	fromFile := runJSON[[]map[string]any](t, s.env, "sim", "--trace", export, "--idle-policy", "fixed:120s", "-o", "json")
	if len(fromFile) != 2 || fromFile[1]["jobs"] != float64(2) || fromFile[1]["node_hours"] != hist[1]["node_hours"] || fromFile[0]["wait_max_s"] != hist[0]["wait_max_s"] {
		t.Errorf("an exported history: %v, the live one: %v", fromFile, hist)
	}
}
