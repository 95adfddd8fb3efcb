package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Scale windows with the real binary. The server has no injectable clock,
// so the window here is one in force whatever today is (yearly, begun in
// 2020: max 0); the nights-to-zero-and-back-at-07:00 walk with a fake
// clock is service's TestScaleWindowNightsAndMornings. The cluster's own
// min 1 would start a node: the window keeps it at zero, a queued job
// waits naming the window, `compute show` prints the window in force, the
// change is one compute event, and a bad trigger is refused at create.
func TestScaleWindowHoldsClusterAtZero(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{})
	dir := t.TempDir()
	cluster := filepath.Join(dir, "cluster.yml")
	doc := `name: windowed
type: amlcompute
size: Standard_DS3_v2
min_instances: 1
max_instances: 2
scale_windows:
  - name: frozen
    trigger:
      type: cron
      expression: "0 0 1 1 *"
      start_time: "2020-01-01T00:00:00"
    max_instances: 0
`
	if err := os.WriteFile(cluster, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	mustRun(t, s.env, "compute", "create", "-f", cluster, "-o", "none")
	if got := strings.TrimSpace(mustRun(t, s.env, "compute", "show", "-n", "windowed", "--query", "scale_window.window", "-o", "tsv")); got != "frozen" {
		t.Fatalf("scale_window.window: %q", got)
	}
	table := mustRun(t, s.env, "compute", "show", "-n", "windowed", "-o", "table")
	if !strings.Contains(table, "in force: min 0, max 0 (window frozen)") {
		t.Fatalf("compute show -o table:\n%s", table)
	}

	name := submitJob(t, s, writeJobFile(t, "command: echo never\ncompute: azureml:windowed\nenvironment:\n  image: python:3.11-slim\n"))
	waitFor(t, time.Minute, "the job to wait naming the window", func() (bool, string) {
		out := mustRun(t, s.env, "job", "show", "-n", name, "--query", "[status, status_reason_code, status_reason]", "-o", "tsv")
		return strings.Contains(out, "scale_window") && strings.Contains(out, "max_instances is 0 in scale window frozen"), out
	})
	waitFor(t, time.Minute, "the window's event", func() (bool, string) {
		ev := mustRun(t, s.env, "compute", "events", "-n", "windowed", "-o", "json")
		return strings.Count(ev, "scale window frozen began: min 0, max 0") == 1, ev
	})
	if nodes := mustRun(t, s.env, "compute", "list-nodes", "-n", "windowed", "-o", "json"); strings.Contains(nodes, `"windowed-n`) {
		t.Fatalf("a node was provisioned under max 0:\n%s", nodes)
	}

	// `compute update` reads the compute, changes a key and applies it
	// back with its ETag: the windows stay, and the loop's writes of the
	// window in force do not make the ETag stale.
	mustRun(t, s.env, "compute", "update", "-n", "windowed", "--max-instances", "3", "-o", "none")
	if got := strings.TrimSpace(mustRun(t, s.env, "compute", "show", "-n", "windowed", "--query", "[max_instances, scale_windows[0].name, scale_window.max_instances]", "-o", "tsv")); strings.Join(strings.Fields(got), " ") != "3 frozen 0" {
		t.Fatalf("after compute update: %q, want max 3, the window kept and still in force", got)
	}

	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, []byte(strings.Replace(strings.Replace(doc, "windowed", "badwindow", 1), `"0 0 1 1 *"`, `"0 0 0 1 1 *"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := mustFail(t, s.env, "compute", "create", "-f", bad)
	if !strings.Contains(out, "scale_windows[0].trigger.expression") {
		t.Fatalf("a six-field cron: %s", out)
	}
}
