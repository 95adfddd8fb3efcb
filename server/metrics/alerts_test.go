package metrics_test

import (
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/accounting"
	"github.com/shoal-ml/shoal/control/watch"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/server/metrics"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlite"
	"github.com/shoal-ml/shoal/store/storetest"
)

// The metrics docs/operations/alerts.yml reads: the oldest queued job's
// wait and the oldest provisioning node's age per cluster (read at the
// scrape, on the services' clock), nodes lost, budget spend, running
// jobs' GPU utilisation, leadership, notifications dropped and failed.
func TestAlertMetrics(t *testing.T) {
	ctx := context.Background()
	clock := storetest.NewClock(storetest.Start)
	db, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "shoal.db"), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cat, _ := (&config.Config{}).Catalog(nil)
	svc := service.New(service.Config{Store: db, Catalog: cat, Clock: clock})
	err = db.Update(ctx, func(tx store.Tx) error {
		if err := tx.InsertWorkspace(&core.Workspace{Name: "ws", Location: "local", CreatedOn: tx.Now()}); err != nil {
			return err
		}
		c := &compute.Compute{ComputeSpec: compute.ComputeSpec{Name: "gpu", Type: compute.ComputeTypeCluster, Size: "Standard_DS3_v2"},
			Workspace: "ws", Version: 1, ProvisioningState: compute.ProvisioningSucceeded, CreatedOn: tx.Now(), ModifiedOn: tx.Now()}
		if err := tx.InsertCompute(c); err != nil {
			return err
		}
		for i, name := range []string{"first", "second"} {
			j := &job.Job{JobSpec: job.JobSpec{Name: name, Type: "command", Command: "true", Compute: "gpu"}, Workspace: "ws",
				Status: job.JobQueued, CreatedOn: tx.Now().Add(time.Duration(i) * 10 * time.Minute), Seq: int64(i + 1), Version: 1}
			if err := tx.InsertJob(j); err != nil {
				return err
			}
		}
		for _, n := range []*node.Node{{ID: "p", State: node.NodePreparing}, {ID: "h", State: node.NodePreparing, Role: node.NodeRoleStatic},
			{ID: "i", State: node.NodeIdle}} {
			n.Workspace, n.Compute, n.Location, n.Size, n.CreatedOn, n.LastHeartbeat, n.Version = "ws", "gpu", "local", "Standard_DS3_v2", tx.Now(), tx.Now(), 1
			if err := tx.InsertNode(n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(40 * time.Minute)
	m := metrics.New(svc)
	svc.SetObserver(m)
	m.NodeLost("ws", "gpu")
	m.NodeLost("ws", "gpu")
	m.SetBudgetSpend([]accounting.BudgetSpend{{Workspace: "ws", Budget: "workspace/monthly", Ratio: 0.85}})
	m.SetJobGPUUtilization([]watch.GPUUtilization{{Workspace: "ws", Compute: "gpu", Job: "train", Percent: 12.5}})
	m.NotificationDropped("ws")
	m.NotificationFailed("ws", "webhook")
	scrape := func() string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		b, _ := io.ReadAll(rec.Body)
		return string(b)
	}
	body := scrape()
	for _, want := range []string{
		`shoal_queue_oldest_wait_seconds{compute="gpu",workspace="ws"} 2400`,
		`shoal_node_provisioning_oldest_seconds{compute="gpu",workspace="ws"} 2400`,
		`shoal_nodes_lost_total{compute="gpu",workspace="ws"} 2`,
		`shoal_budget_spend_ratio{budget="workspace/monthly",workspace="ws"} 0.85`,
		`shoal_job_gpu_utilization_percent{compute="gpu",job="train",workspace="ws"} 12.5`,
		`shoal_notifications_dropped_total{workspace="ws"} 1`,
		`shoal_notifications_failed_total{channel="webhook",workspace="ws"} 1`,
		"shoal_leader 1",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// The outcome counters of a cluster exist at 0 from the scrape after
	// it is seen, so its first failure is a rise increase() sees.
	body = scrape()
	for _, want := range []string{`shoal_jobs_ended_total{compute="gpu",status="Failed",workspace="ws"} 0`,
		`shoal_jobs_ended_total{compute="gpu",status="Completed",workspace="ws"} 0`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// Every metric the shipped rules read is exported.
	for _, name := range regexp.MustCompile(`shoal_[a-z_]+`).FindAllString(readDoc(t, "alerts.yml"), -1) {
		if !strings.Contains(body, "\n"+name+"{") && !strings.Contains(body, "\n"+name+" ") {
			t.Errorf("alerts.yml reads %s, which /metrics does not export", name)
		}
	}
	gone := func(when string) {
		t.Helper()
		for _, name := range []string{"shoal_budget_spend_ratio{", "shoal_job_gpu_utilization_percent{"} {
			if strings.Contains(body, name) {
				t.Errorf("%s still exported %s", name, when)
			}
		}
	}
	// A server that no longer leads says 0 and exports none of the
	// leader's last gauges.
	m.SetLeader(func() bool { return false })
	body = scrape()
	if !strings.Contains(body, "shoal_leader 0") {
		t.Error("a follower's shoal_leader is not 0")
	}
	gone("by a server that no longer leads")
	// Budgets and jobs gone leave the metrics.
	m.SetLeader(nil)
	m.SetBudgetSpend(nil)
	m.SetJobGPUUtilization(nil)
	body = scrape()
	gone("after their source went")
}
