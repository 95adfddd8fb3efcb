package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// Debian's Prometheus scrapes a real server with the shipped rules
// (docs/operations/alerts.yml, evaluated every second): the server leads
// (no ShoalNoLeader), its cluster's failure counter exists at 0 before any
// job ends, and one failed job fires ShoalJobsFailing for that cluster,
// seen in Prometheus' own /api/v1/alerts.
func TestPrometheusFiresShippedAlertOnAFailedJob(t *testing.T) {
	t.Parallel()
	prom, _ := testenv.Prometheus(t)
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	createCluster(t, s, "alerting", "--size", "Standard_DS3_v2", "--max-instances", "1")

	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(s.adminToken(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: shoal
    authorization: {credentials_file: %q}
    static_configs: [{targets: [%q]}]
`, filepath.Join(root, "docs", "operations", "alerts.yml"), tokenFile, strings.TrimPrefix(s.url, "http://"))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	logf, err := os.OpenFile(filepath.Join(dir, "prometheus.log"), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Logf("prometheus log:\n%s", b)
		}
	})
	api := func(path string, v any) error {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("%s: %s", path, resp.Status)
		}
		return json.NewDecoder(resp.Body).Decode(v)
	}
	type sample struct {
		Metric map[string]string `json:"metric"`
		Value  [2]any            `json:"value"`
	}
	query := func(q string) ([]sample, error) {
		var r struct {
			Data struct {
				Result []sample `json:"result"`
			} `json:"data"`
		}
		err := api("/api/v1/query?query="+url.QueryEscape(q), &r)
		return r.Data.Result, err
	}
	type alert struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		State       string            `json:"state"`
	}
	alerts := func() ([]alert, error) {
		var r struct {
			Data struct {
				Alerts []alert `json:"alerts"`
			} `json:"data"`
		}
		err := api("/api/v1/alerts", &r)
		return r.Data.Alerts, err
	}
	// Scraped: the server leads and the cluster's failures are at 0, and the
	// rules have been evaluated since. Prometheus evaluates its rules from
	// its start, before the first scrape, when absent(shoal_leader) holds:
	// ShoalNoLeader is pending then (its for: 1m keeps it from firing) and
	// stays listed until the next evaluation after the scrape. So the test
	// waits for it to leave: a rule that holds against a leading server
	// never does. After that only a firing one is a fault: a scrape that
	// runs past its 1 s timeout on a loaded machine marks shoal_leader
	// stale, and the alert is pending again for a moment.
	waitFor(t, 60*time.Second, "Prometheus to scrape the server's leadership and the cluster's zero failure counter, and ShoalNoLeader to be inactive", func() (bool, string) {
		as, err := alerts()
		if err != nil {
			return false, err.Error()
		}
		for _, a := range as {
			if a.Labels["alertname"] == "ShoalNoLeader" {
				return false, fmt.Sprintf("ShoalNoLeader is %s", a.State)
			}
		}
		lead, err := query(`shoal_leader == 1`)
		if err != nil {
			return false, err.Error()
		}
		failed, err := query(`shoal_jobs_ended_total{compute="alerting",status="Failed"} == 0`)
		if err != nil {
			return false, err.Error()
		}
		return len(lead) == 1 && len(failed) == 1, fmt.Sprintf("leader %v, failed %v", lead, failed)
	})

	name := submitJob(t, s, writeJobFile(t, "command: exit 3\ncompute: alerting\n"))
	waitJob(t, s, name, 60*time.Second, "Failed")

	var fired alert
	waitFor(t, 60*time.Second, "ShoalJobsFailing to fire in Prometheus", func() (bool, string) {
		as, err := alerts()
		if err != nil {
			return false, err.Error()
		}
		for _, a := range as {
			if a.Labels["alertname"] == "ShoalNoLeader" && a.State == "firing" {
				t.Fatalf("ShoalNoLeader fires against a server that leads")
			}
			if a.Labels["alertname"] == "ShoalJobsFailing" && a.State == "firing" {
				fired = a
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", as)
	})
	if fired.Labels["compute"] != "alerting" || fired.Labels["workspace"] != "default" || fired.Labels["severity"] != "warning" {
		t.Errorf("ShoalJobsFailing labels %v, want the failing cluster with severity warning", fired.Labels)
	}
	if want := "100% of the jobs that ended on compute alerting of workspace default"; !strings.HasPrefix(fired.Annotations["description"], want) {
		t.Errorf("description %q, want it to start %q", fired.Annotations["description"], want)
	}
}
