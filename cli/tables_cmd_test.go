package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	jobkind "github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/domain/schedule"
)

// tableServer is a fake Shoal server answering GETs from a path → body
// map; a func body is called (with the count of calls so far) for answers
// that change between polls.
func tableServer(t *testing.T, answers map[string]any) {
	t.Helper()
	var mu sync.Mutex
	calls := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[r.URL.Path]
		if !ok || r.Method != http.MethodGet {
			http.Error(w, `{"error":{"code":"NotFound","message":"unexpected `+r.Method+" "+r.URL.Path+`"}}`, http.StatusNotFound)
			return
		}
		if f, ok := a.(func(n int) any); ok {
			mu.Lock()
			calls[r.URL.Path]++
			n := calls[r.URL.Path]
			mu.Unlock()
			a = f(n)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"value": a})
	}))
	t.Cleanup(srv.Close)
	t.Setenv("SHOAL_SERVER", srv.URL)
	t.Setenv("SHOAL_TOKEN", "token")
	t.Setenv("SHOAL_WORKSPACE", "default")
}

// runCLI runs the CLI with args (and a client config that does not exist,
// so the environment's server is used) and returns its standard output.
func runTableCLI(t *testing.T, ctx context.Context, stdout *syncBuffer, args ...string) {
	t.Helper()
	var stderr bytes.Buffer
	args = append(args, "--client-config", filepath.Join(t.TempDir(), "none.yaml"))
	if code := Run(ctx, args, strings.NewReader(""), stdout, &stderr); code != 0 {
		t.Fatalf("shoal %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
}

// output runs the CLI to the end and returns what it printed.
func output(t *testing.T, args ...string) string {
	t.Helper()
	var out syncBuffer
	runTableCLI(t, context.Background(), &out, args...)
	return out.String()
}

// syncBuffer is a bytes.Buffer safe to read while a command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// sizesAnswer is list-sizes' answer as the server writes it: Azure's keys
// and an estimated_vm_prices block, in catalog (not natural) order.
const sizesAnswer = `[
 {"name":"Standard_D16_v3","family":"standardDSv3Family","v_cp_us":16,"gpus":0,"memory_gb":64,"os_vhd_size_mb":1047552,"max_resource_volume_mb":131072,"low_priority_capable":true,"premium_io":false,"supported_compute_types":["AmlCompute"],
  "estimated_vm_prices":{"billing_currency":"USD","unit_of_measure":"OneHour","values":[{"retail_price":0.768,"os_type":"Linux","vm_tier":"Standard"},{"retail_price":0.1536,"os_type":"Linux","vm_tier":"LowPriority"}]}},
 {"name":"Standard_D2_v3","family":"standardDSv3Family","v_cp_us":2,"gpus":0,"memory_gb":8,"os_vhd_size_mb":1047552,"max_resource_volume_mb":16384,"low_priority_capable":true,"premium_io":false,"supported_compute_types":["AmlCompute"],
  "estimated_vm_prices":{"billing_currency":"USD","unit_of_measure":"OneHour","values":[{"retail_price":0.096,"os_type":"Linux","vm_tier":"Standard"},{"retail_price":0.0192,"os_type":"Linux","vm_tier":"LowPriority"}]}},
 {"name":"Standard_NC6s_v3","family":"standardNCSv3Family","v_cp_us":6,"gpus":1,"gpu_model":"V100","memory_gb":112,"os_vhd_size_mb":1047552,"max_resource_volume_mb":344064,"low_priority_capable":false,"premium_io":true,"supported_compute_types":["AmlCompute"],
  "estimated_vm_prices":{"billing_currency":"USD","unit_of_measure":"OneHour","values":[{"retail_price":3.06,"os_type":"Linux","vm_tier":"Standard"}]}}
]`

// list-sizes -o table: named columns, the hourly prices, natural order;
// TSV and JSON keep the API's objects.
func TestListSizesTable(t *testing.T) {
	tableServer(t, map[string]any{"/api/v1/locations/eastus/sizes": json.RawMessage(sizesAnswer)})
	got := output(t, "compute", "list-sizes", "-l", "eastus", "-o", "table")
	want := `Name              vCPUs  Memory GB  GPUs  GPU Model  Family               USD/Hour  Low-Priority USD/Hour
----------------  -----  ---------  ----  ---------  -------------------  --------  ---------------------
Standard_D2_v3        2          8     0             standardDSv3Family     0.0960                 0.0192
Standard_D16_v3      16         64     0             standardDSv3Family     0.7680                 0.1536
Standard_NC6s_v3      6        112     1  V100       standardNCSv3Family    3.0600
`
	if got != want {
		t.Errorf("list-sizes -o table:\n%s\nwant:\n%s", got, want)
	}
	tsv := output(t, "compute", "list-sizes", "-l", "eastus", "-o", "tsv")
	if first := strings.SplitN(tsv, "\n", 2)[0]; first != "Standard_D16_v3\tstandardDSv3Family\t16\t64\t0\t\tTrue" {
		t.Errorf("list-sizes -o tsv first line %q: want the API's order and columns, as before", first)
	}
	if js := output(t, "compute", "list-sizes", "-l", "eastus"); !strings.Contains(js, `"v_cp_us": 16`) || !strings.Contains(js, `"retail_price": 0.768`) {
		t.Errorf("list-sizes JSON lost the API's keys:\n%s", js)
	}
}

// list-usage -o table: one row per quota line named by its family (the
// API's type is the same for every family), and JSON as the API wrote it.
func TestListUsageTable(t *testing.T) {
	line := func(kind, value, localized string, used, limit int) catalog.Usage {
		return catalog.Usage{ID: "/usages/" + value, AmlWorkspaceLocation: "eastus", Type: "Microsoft.MachineLearningServices/" + kind + "/usages",
			Unit: "Count", CurrentValue: used, Limit: limit, Name: catalog.UsageName{Value: value, LocalizedValue: localized}}
	}
	usages := []catalog.Usage{
		line("totalCores", "TotalCores", "Total Regional vCPUs", 6, -1),
		line("vmFamily", "standardDSv2Family", "Standard DSv2 Family vCPUs", 4, 24),
		line("vmFamily", "standardNCSv3Family", "Standard NCSv3 Family vCPUs", 0, 12),
	}
	tableServer(t, map[string]any{"/api/v1/locations/eastus/usages": usages})
	got := output(t, "compute", "list-usage", "-l", "eastus", "-o", "table")
	want := `Name                 Description                  Used  Limit
-------------------  ---------------------------  ----  ---------
TotalCores           Total Regional vCPUs            6  unlimited
standardDSv2Family   Standard DSv2 Family vCPUs      4  24
standardNCSv3Family  Standard NCSv3 Family vCPUs     0  12
`
	if got != want {
		t.Errorf("list-usage -o table:\n%s\nwant:\n%s", got, want)
	}
	if js := output(t, "compute", "list-usage", "-l", "eastus"); !strings.Contains(js, `"type": "Microsoft.MachineLearningServices/vmFamily/usages"`) || !strings.Contains(js, `"localized_value": "Standard DSv2 Family vCPUs"`) {
		t.Errorf("list-usage JSON lost the API's keys:\n%s", js)
	}
}

// job list-attempts -o table has the nodes each attempt ran on.
func TestListAttemptsTableHasNodes(t *testing.T) {
	start := time.Date(2024, 5, 1, 10, 0, 0, 123000000, time.UTC)
	end := start.Add(90 * time.Second)
	one, zero := 1, 0
	attempts := []*jobkind.Attempt{
		{Number: 1, Status: "Failed", StartTime: &start, EndTime: &end, ExitCode: &one, Reason: "node lost",
			Ranks: []*jobkind.RankStatus{{Rank: 0, NodeID: "node-a"}, {Rank: 1, NodeID: "node-b"}}},
		{Number: 2, Status: "Completed", StartTime: &end, EndTime: &end, ExitCode: &zero,
			Ranks: []*jobkind.RankStatus{{Rank: 0, NodeID: "node-c"}, {Rank: 1, NodeID: "node-c"}}},
	}
	tableServer(t, map[string]any{"/api/v1/workspaces/default/jobs/j1/attempts": attempts})
	got := output(t, "job", "list-attempts", "-n", "j1", "-o", "table")
	want := `Number  Status     Nodes          Start Time            End Time              Exit Code  Reason
------  ---------  -------------  --------------------  --------------------  ---------  ---------
     1  Failed     node-a,node-b  2024-05-01T10:00:00Z  2024-05-01T10:01:30Z          1  node lost
     2  Completed  node-c         2024-05-01T10:01:30Z  2024-05-01T10:01:30Z          0
`
	if got != want {
		t.Errorf("list-attempts -o table:\n%s\nwant:\n%s", got, want)
	}
	if tsv := output(t, "job", "list-attempts", "-n", "j1", "-o", "tsv"); strings.Contains(tsv, "node-a") {
		t.Errorf("list-attempts -o tsv changed its columns:\n%s", tsv)
	}
}

// cost report -o table: money and hours to two decimals (four significant
// digits under half a cent, so a short run does not read 0.00), a total
// row; JSON keeps the exact numbers and has no total.
func TestCostReportTable(t *testing.T) {
	lines := []money.CostLine{
		{Key: "cpu-cluster", NodeSeconds: 600, NodeHours: 0.16666666666666666, USD: 0.01648099850849611, Dedicated: 0.01648099850849611},
		{Key: "gpu-cluster", NodeSeconds: 36000, NodeHours: 10, USD: 30.6, Dedicated: 24.48, LowPriority: 6.12},
		{Key: "(idle)", NodeSeconds: 1800, NodeHours: 0.5, USD: 0.048},
		{Key: "short-job", NodeSeconds: 2, NodeHours: 0.0005555555555555556, USD: 0.00008111111111111111, LowPriority: 0.00008111111111111111},
	}
	tableServer(t, map[string]any{"/api/v1/workspaces/default/cost": lines})
	got := output(t, "cost", "report", "-o", "table")
	want := `Key          Node Hours         USD  Dedicated USD  Low-Priority USD
-----------  ----------  ----------  -------------  ----------------
cpu-cluster        0.17        0.02           0.02              0.00
gpu-cluster       10.00       30.60          24.48              6.12
(idle)             0.50        0.05           0.00              0.00
short-job     0.0005556  0.00008111           0.00        0.00008111
(total)           10.67       30.66          24.50              6.12
`
	if got != want {
		t.Errorf("cost report -o table:\n%s\nwant:\n%s", got, want)
	}
	js := output(t, "cost", "report")
	if !strings.Contains(js, "0.01648099850849611") || strings.Contains(js, "(total)") {
		t.Errorf("cost report JSON: want the exact numbers and no total:\n%s", js)
	}
	if csv := output(t, "cost", "report", "-o", "csv"); strings.Contains(csv, "(total)") {
		t.Errorf("cost report -o csv has a total row:\n%s", csv)
	}
}

// An empty list is "(none)" in a table and [] in JSON.
func TestEmptyListTable(t *testing.T) {
	tableServer(t, map[string]any{"/api/v1/workspaces/default/jobs": []*jobkind.Job{}})
	if got := output(t, "job", "list", "-o", "table"); got != "(none)\n" {
		t.Errorf("job list -o table with no jobs = %q, want %q", got, "(none)\n")
	}
	if got := output(t, "job", "list"); got != "[]\n" {
		t.Errorf("job list with no jobs = %q, want []", got)
	}
}

// job list --watch -o table prints the header once, when the first job
// comes, and then only the rows of jobs that change.
func TestJobListWatchTableOneHeader(t *testing.T) {
	created := time.Date(2024, 5, 1, 10, 0, 0, 5000000, time.UTC)
	job := func(name, status, reason string) *jobkind.Job {
		j := &jobkind.Job{Status: status, StatusReason: reason, CreatedOn: created}
		j.Name, j.Compute = name, "cpu"
		return j
	}
	polls := make(chan int, 16)
	tableServer(t, map[string]any{"/api/v1/workspaces/default/jobs": func(n int) any {
		polls <- n
		switch n {
		case 1:
			return []*jobkind.Job{}
		case 2, 3:
			return []*jobkind.Job{job("a", "Queued", "waiting for a node")}
		}
		return []*jobkind.Job{job("b", "Queued", "waiting for a node"), job("a", "Running", "")}
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		args := []string{"job", "list", "--watch", "-o", "table", "--client-config", filepath.Join(t.TempDir(), "none.yaml")}
		code <- Run(ctx, args, strings.NewReader(""), &out, &stderr)
	}()
	// Four polls a second apart; once the fourth answer is printed,
	// cancel while the command waits for the next poll.
	for n := 0; n != 4; {
		select {
		case n = <-polls:
		case <-time.After(10 * time.Second):
			t.Fatalf("the watch polled %d times in time; printed:\n%s", n, out.String())
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), "\n") < 6 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("job list --watch: exit %d: %s", c, stderr.String())
	}
	want := `(none)
Name                        Display Name  Status           Compute  Attempt Count  Created On            Status Reason
--------------------------  ------------  ---------------  -------  -------------  --------------------  ------------------
a                                         Queued           cpu                  0  2024-05-01T10:00:00Z  waiting for a node
b                                         Queued           cpu                  0  2024-05-01T10:00:00Z  waiting for a node
a                                         Running          cpu                  0  2024-05-01T10:00:00Z
`
	if got := out.String(); got != want {
		t.Errorf("job list --watch -o table:\n%s\nwant:\n%s", got, want)
	}
}

// `compute show` prints a cluster's scale windows, the one in force and
// the next change: under the compute in a table, and whole in JSON for
// --query.
func TestComputeShowScaleWindows(t *testing.T) {
	zero, two, eight, four := 0, 2, 8, 4
	since := time.Date(2026, 1, 5, 19, 0, 0, 0, time.UTC)
	next := time.Date(2026, 1, 6, 6, 0, 0, 0, time.UTC)
	comp := &compute.Compute{ComputeSpec: compute.ComputeSpec{
		Name: "cpu", Type: "amlcompute", MinInstances: &zero, MaxInstances: &four,
		ScaleWindows: []*schedule.ScaleWindow{
			{Name: "nights", Trigger: &schedule.Trigger{Type: "cron", Expression: "0 20 * * *", TimeZone: "W. Europe Standard Time"}, MinInstances: &zero, MaxInstances: &zero},
			{Name: "mornings", Trigger: &schedule.Trigger{Type: "cron", Expression: "0 7 * * 1-5", TimeZone: "W. Europe Standard Time"}, MinInstances: &two, MaxInstances: &eight},
		},
		ScaleWindow: &schedule.ScaleWindowState{Window: "nights", Since: &since, NextChange: &next, NextWindow: "mornings"},
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/computes/cpu") {
			http.Error(w, `{"error":{"code":"NotFound","message":"unexpected"}}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(comp)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("SHOAL_SERVER", srv.URL)
	t.Setenv("SHOAL_TOKEN", "token")
	t.Setenv("SHOAL_WORKSPACE", "default")

	table := output(t, "compute", "show", "-n", "cpu", "-o", "table")
	for _, want := range []string{
		"Window", "In Force",
		`nights    cron "0 20 * * *" W. Europe Standard Time`,
		"yes",
		"in force: min 0, max 0 (window nights); next change 2026-01-06T06:00:00Z (window mornings)",
	} {
		if !strings.Contains(table, want) {
			t.Fatalf("table lacks %q:\n%s", want, table)
		}
	}
	if got := strings.TrimSpace(output(t, "compute", "show", "-n", "cpu", "--query", "scale_window.next_window", "-o", "tsv")); got != "mornings" {
		t.Fatalf("--query scale_window.next_window: %q", got)
	}
}
