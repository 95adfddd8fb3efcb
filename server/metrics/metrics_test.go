package metrics_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/api"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/provider/fake"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/server/metrics"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store/sqlite"
	"github.com/shoal-ml/shoal/store/sqlstore/txobserve"
)

// /metrics serves the instruments and the state read at the scrape, to
// an authenticated caller only (unless public).
func TestMetricsEndpoint(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "shoal.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cat, _ := (&config.Config{}).Catalog(nil)
	svc := service.New(service.Config{Store: store, Catalog: cat, ServerURL: "http://shoal.test", Providers: map[string]node.Provider{"local": fake.New()}})
	admin, _ := svc.BootstrapAdmin(ctx)
	srv := api.NewServer(svc, nil)
	m := metrics.New(svc)
	svc.SetObserver(m)
	srv.SetRequestObserver(m.ObserveRequest)
	txobserve.Set(m.ObserveTransaction)
	defer txobserve.Set(nil)
	txobserve.SetWrites(m.ObserveWrite)
	defer txobserve.SetWrites(nil)
	srv.SetMetrics(m.Handler(), false)
	ts := httptest.NewServer(srv)
	defer ts.Close()

	req, _ := http.NewRequest("PUT", ts.URL+"/api/v1/workspaces/default/computes/cpu", strings.NewReader(`{"size":"Standard_DS3_v2","max_instances":2}`))
	req.Header.Set("Authorization", "Bearer "+admin)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 201 {
		t.Fatalf("create: %v %v", resp, err)
	}
	m.JobStarted("default", "cpu", 90*time.Second)
	m.ScaleDecision("default", "cpu", "scale_up", "demand")
	m.ObservePass("submitted", 30*time.Millisecond, 7*time.Millisecond)

	if resp, _ := http.Get(ts.URL + "/metrics"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous /metrics: %d, want 401", resp.StatusCode)
	}
	req, _ = http.NewRequest("GET", ts.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/metrics: %v %v", resp, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`shoal_nodes{compute="cpu",state="idle",workspace="default"} 0`,
		`shoal_queued_jobs{compute="cpu",workspace="default"} 0`,
		`shoal_cost_rate_usd_per_hour{compute="cpu",workspace="default"} 0`,
		`shoal_job_queue_wait_seconds_bucket{compute="cpu",workspace="default",le="120"} 1`,
		`shoal_scale_decisions_total{action="scale_up",compute="cpu",reason="demand",workspace="default"} 1`,
		`shoal_api_request_duration_seconds_count{code="201",route="PUT /api/v1/workspaces/{ws}/computes/{name}"} 1`,
		`shoal_store_transaction_seconds_count{kind="update",outcome="ok"}`,
		`go_goroutines`,
		`shoal_placement_lock_wait_seconds_bucket{pass="submitted",le="0.025"} 0`,
		`shoal_placement_lock_wait_seconds_bucket{pass="submitted",le="0.05"} 1`,
		`shoal_placement_pass_seconds_sum{pass="submitted"} 0.007`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// A small fleet's lease is the configured one (the default 10 s).
	if v, ok := sample(string(body), "shoal_node_lease_seconds"); !ok || v != 10 {
		t.Errorf("/metrics: shoal_node_lease_seconds = %v (found %v), want 10", v, ok)
	}
	// The compute's creation was a write: the write path's counters moved.
	for _, name := range []string{"shoal_store_write_transactions_total", "shoal_store_write_updates_total", "shoal_store_write_busy_seconds_total"} {
		v, ok := sample(string(body), name)
		if !ok || v <= 0 {
			t.Errorf("/metrics: %s = %v (found %v), want > 0 after a write", name, v, ok)
		}
	}
}

// sample returns the value of the unlabelled metric name in a text
// exposition.
func sample(body, name string) (float64, bool) {
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}
