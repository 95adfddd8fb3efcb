package sim

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden replay table")

func loadTrace(t testing.TB) []Job {
	t.Helper()
	f, err := os.Open("testdata/alibaba-gpu-2023/openb_pod_list_default.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	jobs, err := ReadAlibaba(f, Filter{GPUs: 1})
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// goldenPolicies are the fixed idle timeouts of the golden replay.
var goldenPolicies = []time.Duration{0, 120 * time.Second, 600 * time.Second, 1800 * time.Second}

// The shared trace's 1-GPU jobs (one job per node), a 180 s provisioning
// delay, min 0 and unbounded max, for fixed idle timeouts of 0, 120, 600
// and 1800 s: node-hours (from the start of provisioning to release),
// busy node-hours and the wait of every job (submit to start), held as a
// golden file (testdata/golden/alibaba-1gpu.txt) that a replay written
// outside this project can be checked against. go test ./sim -update
// rewrites it after an intended change.
func TestGoldenReplay(t *testing.T) {
	jobs := loadTrace(t)
	if len(jobs) != 6129 {
		t.Fatalf("%d 1-GPU jobs with a schedule and a deletion time, want 6129", len(jobs))
	}
	var b strings.Builder
	results := make([]*Result, len(goldenPolicies))
	for i, idle := range goldenPolicies {
		r, err := Run(jobs, Config{IdleTimeBeforeScaleDown: idle, ProvisionDelay: 180 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		results[i] = r
	}
	fmt.Fprintf(&b, "# Alibaba GPU 2023, 1-GPU jobs (%d), one per node; provisioning 180 s; min 0, max unbounded.\n", len(jobs))
	fmt.Fprintf(&b, "# idle_timeout_s node_hours busy_node_hours jobs_waited wait_mean_s wait_p95_s scale_ups\n")
	for i, r := range results {
		fmt.Fprintf(&b, "%d %.6f %.6f %d %.3f %.0f %d\n", int(goldenPolicies[i].Seconds()), r.NodeHours, r.BusyNodeHours, r.Waited, r.WaitMean, r.WaitP95, r.ScaleUps)
	}
	fmt.Fprintf(&b, "# job wait_s at idle timeouts 0 120 600 1800\n")
	for j := range jobs {
		fmt.Fprintf(&b, "%s", jobs[j].ID)
		for _, r := range results {
			fmt.Fprintf(&b, " %g", r.Waits[j].Wait.Seconds())
		}
		b.WriteString("\n")
	}
	// What `shoal sim --waits` writes is the same per-job table.
	var csvWaits strings.Builder
	if err := WriteWaits(&csvWaits, jobs, results); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(csvWaits.String()), "\n")
	if rows[0] != "job,submit_s,fixed:0s,fixed:120s,fixed:600s,fixed:1800s" || len(rows) != len(jobs)+1 {
		t.Fatalf("--waits header %q, %d rows", rows[0], len(rows))
	}
	perJob := strings.SplitAfter(b.String(), "# job wait_s at idle timeouts 0 120 600 1800\n")[1]
	for i, line := range strings.Split(strings.TrimSpace(perJob), "\n") {
		f := strings.Split(rows[i+1], ",")
		if got := strings.Join(append(f[:1:1], f[2:]...), " "); got != line {
			t.Fatalf("--waits row %d is %q, the golden table's %q", i+1, rows[i+1], line)
		}
	}
	path := filepath.Join("testdata", "golden", "alibaba-1gpu.txt")
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./sim -run TestGoldenReplay -update writes it)", err)
	}
	if string(want) != b.String() {
		got := strings.Split(b.String(), "\n")
		for i, line := range strings.Split(string(want), "\n") {
			if i >= len(got) || got[i] != line {
				t.Fatalf("%s differs at line %d:\nwant %s\ngot  %s", path, i+1, line, got[min(i, len(got)-1)])
			}
		}
		t.Fatalf("%s differs (got %d lines)", path, len(got))
	}
	for _, line := range strings.SplitN(b.String(), "\n", 7)[:6] {
		t.Log(line)
	}
}

// On the same trace the adaptive policy is Pareto-ahead of Azure's
// default: no more node-hours than a fixed 120 s and a lower mean wait.
func TestAdaptiveBeatsTheDefault(t *testing.T) {
	jobs := loadTrace(t)
	base := Config{IdleTimeBeforeScaleDown: 120 * time.Second, ProvisionDelay: 180 * time.Second, PricePerHour: 3.06}
	fixed, err := Run(jobs, base)
	if err != nil {
		t.Fatal(err)
	}
	ad := base
	ad.Adaptive = true
	adaptive, err := Run(jobs, ad)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fixed 120 s: %.1f node-hours, mean wait %.1f s, %d jobs waited", fixed.NodeHours, fixed.WaitMean, fixed.Waited)
	t.Logf("adaptive:    %.1f node-hours, mean wait %.1f s, %d jobs waited", adaptive.NodeHours, adaptive.WaitMean, adaptive.Waited)
	if adaptive.NodeHours > fixed.NodeHours || adaptive.WaitMean >= fixed.WaitMean {
		t.Errorf("adaptive is not Pareto-ahead of a fixed 120 s")
	}
}

// Every job runs once and waits no less than zero; node-hours cover the
// busy ones; a replay is deterministic.
func TestReplayInvariants(t *testing.T) {
	jobs := loadTrace(t)[:500]
	cfg := Config{IdleTimeBeforeScaleDown: 60 * time.Second, ProvisionDelay: 90 * time.Second, MaxInstances: 40, MinInstances: 2, Series: true}
	a, err := Run(jobs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Run(jobs, cfg)
	if fmt.Sprint(a.Waits) != fmt.Sprint(b.Waits) || a.NodeHours != b.NodeHours || len(a.Decisions) != len(b.Decisions) {
		t.Fatal("two replays of the same trace differ")
	}
	for i, w := range a.Waits {
		if w.ID != jobs[i].ID || w.Wait < 0 {
			t.Fatalf("job %d: %+v", i, w)
		}
	}
	if a.NodeHours < a.BusyNodeHours || a.IdleNodeHours < 0 {
		t.Errorf("node-hours %.2f below busy %.2f", a.NodeHours, a.BusyNodeHours)
	}
	for _, p := range a.Series {
		if p.Nodes > 40 || p.Busy > p.Nodes {
			t.Fatalf("series point %+v breaks max_instances 40", p)
		}
	}
}

// The simple format: submit_time,duration,instance_count, with a header
// or not; bad lines are refused naming the line and the field.
func TestReadSimple(t *testing.T) {
	jobs, err := ReadSimple(strings.NewReader("submit_time,duration,instance_count\n10,60,2\n0,30\n5.5,1,1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 3 || jobs[0].Submit != 0 || jobs[1].Submit != 5500*time.Millisecond || jobs[2].Nodes != 2 {
		t.Fatalf("jobs %+v", jobs)
	}
	for in, want := range map[string]string{
		"x,60,1\n":   "line 1: submit_time",
		"0,-1,1\n":   "line 1: duration",
		"0,1,0\n":    "line 1: instance_count",
		"0,1,1,1\n":  "line 1: want submit_time,duration",
		"0,1\n1,x\n": "line 2: duration",
	} {
		if _, err := ReadSimple(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	if _, err := Run([]Job{{ID: "big", Nodes: 5}}, Config{MaxInstances: 4}); err == nil || !strings.Contains(err.Error(), "max_instances") {
		t.Errorf("a job bigger than the cluster: %v", err)
	}
}

// BenchmarkReplay replays the whole shared trace's 1-GPU jobs once per
// iteration (the target: under 10 s on 2 cores).
func BenchmarkReplay(b *testing.B) {
	jobs := loadTrace(b)
	for b.Loop() {
		if _, err := Run(jobs, Config{IdleTimeBeforeScaleDown: 120 * time.Second, ProvisionDelay: 180 * time.Second}); err != nil {
			b.Fatal(err)
		}
	}
}
