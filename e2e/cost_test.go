package e2e_test

import (
	"math"
	"strings"
	"testing"
	"time"
)

// Cost and budgets from the CLI against a live server: a job's cost on
// `job show`, a cost report whose every grouping adds up to the same
// node-seconds, a block budget on a tag that, once reached, stops the
// next scale-up with its reason on the queued job (warnings at 50, 80 and
// 100 % in `budget events`), and bad budgets refused naming the flag.
func TestCostAndBudgetCLI(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	createCluster(t, s, "vision", "--size", "Standard_DS3_v2", "--max-instances", "1", "--idle-time-before-scale-down", "1", "--tags", "team=vision")
	first := submitJob(t, s, writeJobFile(t, "command: sleep 1\ncompute: vision\n"))
	waitJob(t, s, first, 60*time.Second, "Completed")
	if j := runJSON[map[string]any](t, s.env, "job", "show", "-n", first, "-o", "json"); j["cost"] == nil ||
		j["cost"].(map[string]any)["usd"].(float64) <= 0 || j["cost"].(map[string]any)["node_seconds"].(float64) < 0.5 {
		t.Errorf("job show has no cost: %v", j["cost"])
	}
	// The node is released after its idle second: its whole life is in
	// the ledger, and every grouping sums to it.
	waitFor(t, 30*time.Second, "the node released", func() (bool, string) {
		out := mustRun(t, s.env, "compute", "list-nodes", "-n", "vision", "--query", "length(@)", "-o", "tsv")
		return strings.TrimSpace(out) == "0", out
	})
	totals := map[string]float64{}
	for _, g := range []string{"compute", "node", "size", "tier", "user", "job", "tag:team"} {
		lines := runJSON[[]map[string]any](t, s.env, "cost", "report", "--since", "1h", "--group-by", g, "-o", "json")
		for _, l := range lines {
			totals[g] += l["node_seconds"].(float64)
		}
	}
	if totals["compute"] <= 1 {
		t.Fatalf("node-seconds by compute: %v", totals)
	}
	for g, v := range totals {
		if math.Abs(v-totals["compute"]) > 1e-6 {
			t.Errorf("grouped by %s the report sums to %v node-seconds, by compute to %v", g, v, totals["compute"])
		}
	}
	if csv := mustRun(t, s.env, "cost", "report", "--since", "1h", "--group-by", "tag:team", "-o", "csv"); !strings.Contains(csv, "vision") {
		t.Errorf("CSV report:\n%s", csv)
	}

	// Bad budgets are refused naming what is wrong; nothing is stored.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--scope", "team=vision", "--limit", "5"}, "scope"},
		{[]string{"--scope", "tag:team=vision", "--limit", "-1"}, "limit"},
		{[]string{"--scope", "workspace", "--limit", "5", "--period", "year"}, "period"},
		{[]string{"--scope", "workspace", "--limit", "5", "--action", "stop"}, "action"},
	} {
		if stderr, _ := mustFail(t, s.env, append([]string{"budget", "create"}, c.args...)...); !strings.Contains(stderr, c.want) {
			t.Errorf("budget create %v: %s, want it to name %s", c.args, stderr, c.want)
		}
	}
	if out := mustRun(t, s.env, "budget", "list", "--query", "length(@)", "-o", "tsv"); strings.TrimSpace(out) != "0" {
		t.Fatalf("refused budgets were stored: %s", out)
	}

	// A block budget far below what the team spent: reached at its first
	// pricing; the next job gets no node and says why.
	mustRun(t, s.env, "budget", "create", "--scope", "tag:team=vision", "--limit", "0.000001", "--period", "day", "--action", "block", "-o", "none")
	// The controller prices budgets every 10 s: once it has, the warnings
	// at 50, 80 and 100 % are events and scale-up stops for the tag.
	waitFor(t, 40*time.Second, "the budget's 100 % event", func() (bool, string) {
		out := mustRun(t, s.env, "budget", "events", "-o", "tsv")
		return strings.Contains(out, "at 100 %"), out
	})
	if out := mustRun(t, s.env, "budget", "list", "--query", "[0].reached", "-o", "tsv"); !strings.EqualFold(strings.TrimSpace(out), "true") {
		t.Errorf("budget list: reached %s", out)
	}
	next := submitJob(t, s, writeJobFile(t, "command: echo hi\ncompute: vision\n"))
	waitFor(t, 30*time.Second, "the job's reason naming the budget", func() (bool, string) {
		j := runJSON[jobView](t, s.env, "job", "show", "-n", next, "-o", "json")
		return j.Status == "Queued" && strings.Contains(j.StatusReason, "budget team=vision 0.000001 USD/day reached"), j.Status + ": " + j.StatusReason
	})
	time.Sleep(2 * time.Second) // a few controller passes: still no node
	if out := mustRun(t, s.env, "compute", "list-nodes", "-n", "vision", "--query", "length(@)", "-o", "tsv"); strings.TrimSpace(out) != "0" {
		t.Errorf("a node was added past the budget: %s", out)
	}
	events := mustRun(t, s.env, "budget", "events", "-o", "tsv")
	for _, pct := range []string{"at 50 %", "at 80 %", "at 100 %"} {
		if !strings.Contains(events, pct) {
			t.Errorf("budget events lack %q:\n%s", pct, events)
		}
	}
	// Removing the budget lets the job run.
	mustRun(t, s.env, "budget", "delete", "-n", "tag:team=vision/day", "-o", "none")
	waitJob(t, s, next, 60*time.Second, "Completed")
}
