package metrics

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shoal-ml/shoal/control/accounting"
	"github.com/shoal-ml/shoal/control/watch"
	"github.com/shoal-ml/shoal/domain/job"
)

// alertMetrics are the instruments docs/operations/alerts.yml reads
// beside the others: leadership, nodes lost, the budgets' spend, running
// jobs' GPU utilisation, and notifications dropped or failed.
type alertMetrics struct {
	leader    atomic.Pointer[func() bool]
	nodesLost *prometheus.CounterVec
	dropped   *prometheus.CounterVec
	failed    *prometheus.CounterVec
	mu        sync.Mutex
	budgets   []accounting.BudgetSpend
	gpus      []watch.GPUUtilization
}

var (
	budgetDesc = prometheus.NewDesc("shoal_budget_spend_ratio", "A budget's spend in its current period over its limit (1 is the cap), as the last budget check priced it.",
		[]string{"workspace", "budget"}, nil)
	gpuDesc = prometheus.NewDesc("shoal_job_gpu_utilization_percent", "A running job's last GPU sample: the mean utilisation of its GPUs, in percent.",
		[]string{"workspace", "compute", "job"}, nil)
	leaderDesc = prometheus.NewDesc("shoal_leader", "1 while this server runs the controllers (the leader), 0 otherwise.", nil, nil)
)

func newAlertMetrics() *alertMetrics {
	a := &alertMetrics{
		nodesLost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_nodes_lost_total",
			Help: "Nodes declared lost (their agent missed its lease, or never joined), by cluster."}, []string{"workspace", "compute"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_notifications_dropped_total",
			Help: "Notifications not queued because their receiver had too many pending."}, []string{"workspace"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_notifications_failed_total",
			Help: "Notification deliveries given up after their last try, by channel (webhook, email)."}, []string{"workspace", "channel"}),
	}
	a.SetLeader(nil)
	return a
}

// zeroCounters makes a cluster's outcome counters exist at 0 before
// their first increment: a series that first appears at 1 has no rise
// Prometheus' increase() can see, and the first failed job or lost node
// of a cluster would never fire its alert. (Registered from the scrape,
// they show from the next one.)
func (m *Metrics) zeroCounters(ws, compute string) {
	for _, st := range []string{job.JobCompleted, job.JobFailed, job.JobCanceled} {
		m.jobsEnded.WithLabelValues(ws, compute, st)
	}
	m.nodesLost.WithLabelValues(ws, compute)
}

// SetLeader installs how the server knows it leads; nil: it always does
// (a server alone on its SQLite store).
func (a *alertMetrics) SetLeader(leading func() bool) {
	if leading == nil {
		leading = func() bool { return true }
	}
	a.leader.Store(&leading)
}

// NodeLost implements service.NodeLostObserver.
func (a *alertMetrics) NodeLost(ws, compute string) { a.nodesLost.WithLabelValues(ws, compute).Inc() }

// NotificationDropped counts a notification not queued for a receiver
// with too many pending (the notifier calls it).
func (a *alertMetrics) NotificationDropped(ws string) { a.dropped.WithLabelValues(ws).Inc() }

// NotificationFailed counts a delivery given up after its last try;
// channel is "webhook" or "email" (the sender calls it).
func (a *alertMetrics) NotificationFailed(ws, channel string) {
	a.failed.WithLabelValues(ws, channel).Inc()
}

// SetBudgetSpend implements accounting.BudgetGauges.
func (a *alertMetrics) SetBudgetSpend(s []accounting.BudgetSpend) {
	a.mu.Lock()
	a.budgets = s
	a.mu.Unlock()
}

// SetJobGPUUtilization implements watch.Gauges.
func (a *alertMetrics) SetJobGPUUtilization(s []watch.GPUUtilization) {
	a.mu.Lock()
	a.gpus = s
	a.mu.Unlock()
}

// gauges collects the gauges set from outside at each scrape.
type gauges struct{ a *alertMetrics }

func (g gauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- budgetDesc
	ch <- gpuDesc
	ch <- leaderDesc
}

func (g gauges) Collect(ch chan<- prometheus.Metric) {
	a := g.a
	v := 0.0
	if (*a.leader.Load())() {
		v = 1
	}
	ch <- prometheus.MustNewConstMetric(leaderDesc, prometheus.GaugeValue, v)
	if v == 0 {
		// The leader's loops set these: a server that no longer leads
		// would export its last values for ever (and a stale idle GPU
		// would page someone).
		return
	}
	a.mu.Lock()
	budgets, gpus := a.budgets, a.gpus
	a.mu.Unlock()
	for _, b := range budgets {
		ch <- prometheus.MustNewConstMetric(budgetDesc, prometheus.GaugeValue, b.Ratio, b.Workspace, b.Budget)
	}
	for _, s := range gpus {
		ch <- prometheus.MustNewConstMetric(gpuDesc, prometheus.GaugeValue, s.Percent, s.Workspace, s.Compute, s.Job)
	}
}
