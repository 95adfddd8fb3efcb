// Package metrics exposes Shoal's Prometheus metrics (client_golang):
// what the services report as it happens (queue wait, job outcomes,
// provisioning time, scale decisions), API latency by route, store
// transaction latency, and, read from the store at each scrape, nodes by
// state and cluster, queue depth and each cluster's cost rate.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
)

// Metrics holds the registry and the instruments.
type Metrics struct {
	reg          *prometheus.Registry
	queueWait    *prometheus.HistogramVec
	jobsEnded    *prometheus.CounterVec
	provisioning *prometheus.HistogramVec
	decisions    *prometheus.CounterVec
	api          *prometheus.HistogramVec
	store        *prometheus.HistogramVec
	// The write path: transactions, the Updates they carried and the
	// time they held the store's writer (ObserveWrite).
	writeTxs, writeUpdates, writeBusy prometheus.Counter
	// writeRetries counts write transactions run again (ObserveRetry).
	writeRetries prometheus.Counter
	// The controller's placement passes: how long each waited for the
	// placement lock and ran (ObservePass).
	passWait, passRun *prometheus.HistogramVec
	*alertMetrics
}

// New registers the instruments and the scrape-time collector over svc.
func New(svc *service.Services) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), alertMetrics: newAlertMetrics()}
	waits := []float64{0, 1, 5, 15, 30, 60, 120, 180, 300, 600, 1800, 3600, 4 * 3600}
	m.queueWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "shoal_job_queue_wait_seconds",
		Help: "Time from a job's submission to its start.", Buckets: waits}, []string{"workspace", "compute"})
	m.jobsEnded = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_jobs_ended_total",
		Help: "Jobs that reached a terminal status, by status."}, []string{"workspace", "compute", "status"})
	m.provisioning = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "shoal_node_provisioning_seconds",
		Help: "Time from a node being asked for to its agent joining.", Buckets: waits}, []string{"workspace", "compute"})
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shoal_scale_decisions_total",
		Help: "Autoscaler decisions by action and by the kind of their reason."}, []string{"workspace", "compute", "action", "reason"})
	m.api = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "shoal_api_request_duration_seconds",
		Help: "API request latency by route and status code.", Buckets: prometheus.DefBuckets}, []string{"route", "code"})
	m.store = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "shoal_store_transaction_seconds",
		Help:    "Store transaction latency, read-only (view) or read-write (update), and outcome.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}}, []string{"kind", "outcome"})
	m.writeTxs = prometheus.NewCounter(prometheus.CounterOpts{Name: "shoal_store_write_transactions_total",
		Help: "Write transactions the store committed or rolled back (on PostgreSQL one carries every Update that waited while the last was written)."})
	m.writeUpdates = prometheus.NewCounter(prometheus.CounterOpts{Name: "shoal_store_write_updates_total",
		Help: "Updates the write transactions carried."})
	m.writeBusy = prometheus.NewCounter(prometheus.CounterOpts{Name: "shoal_store_write_busy_seconds_total",
		Help: "Time write transactions held the store's writer (SQLite's write connection; on PostgreSQL from begin to commit, waits for row locks and runs again included): a rate near 1 means the write path is the bound."})
	m.writeRetries = prometheus.NewCounter(prometheus.CounterOpts{Name: "shoal_store_write_retries_total",
		Help: "Write transactions run again because PostgreSQL would not commit them beside another server's (a serialization failure or deadlock); always 0 on SQLite and with one server."})
	m.reg.MustRegister(m.writeTxs, m.writeUpdates, m.writeBusy, m.writeRetries)
	passBuckets := []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	m.passWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "shoal_placement_lock_wait_seconds",
		Help:    "How long a placement pass waited for another to end before it ran, by what started it (full: a tick; changes; submitted: a new job's decision; computes: a node joined, pre-pulled or freed, a job queued again, a cluster created or deleted, a node released; whole_queue takes no lock).",
		Buckets: passBuckets}, []string{"pass"})
	m.passRun = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "shoal_placement_pass_seconds",
		Help:    "How long a placement pass ran once it held the placement lock (scheduling and the autoscaler), by what started it.",
		Buckets: passBuckets}, []string{"pass"})
	m.reg.MustRegister(m.passWait, m.passRun)
	// The lease agents are told now: longer than node_lease in a fleet
	// too large for its syncs (decide/nodelease), and with it how long a
	// lost node goes unnoticed.
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shoal_node_lease_seconds",
		Help: "The lease agents are told now (they sync every third of it): node_lease, or longer for a fleet that would sync more than max_heartbeats_per_second."},
		func() float64 { return svc.LeaseGrant(context.Background()).Seconds() }))
	m.reg.MustRegister(m.queueWait, m.jobsEnded, m.provisioning, m.decisions, m.api, m.store, m.nodesLost, m.dropped, m.failed, gauges{m.alertMetrics},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), &stateCollector{svc: svc, m: m})
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry is the registry, for tests.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// JobStarted implements service.Observer.
func (m *Metrics) JobStarted(ws, compute string, wait time.Duration) {
	m.queueWait.WithLabelValues(ws, compute).Observe(wait.Seconds())
}

// JobEnded implements service.Observer.
func (m *Metrics) JobEnded(ws, compute, status string) {
	m.jobsEnded.WithLabelValues(ws, compute, status).Inc()
}

// NodeReady implements service.Observer.
func (m *Metrics) NodeReady(ws, compute string, d time.Duration) {
	m.provisioning.WithLabelValues(ws, compute).Observe(d.Seconds())
}

// ScaleDecision implements service.Observer.
func (m *Metrics) ScaleDecision(ws, compute, action, kind string) {
	m.decisions.WithLabelValues(ws, compute, action, kind).Inc()
}

// ObserveRequest records an API request's latency under its route pattern.
func (m *Metrics) ObserveRequest(route string, code int, d time.Duration) {
	m.api.WithLabelValues(route, strconv.Itoa(code)).Observe(d.Seconds())
}

// ObserveTransaction records a store transaction.
func (m *Metrics) ObserveTransaction(readOnly bool, d time.Duration, err error) {
	kind, outcome := "update", "ok"
	if readOnly {
		kind = "view"
	}
	if err != nil {
		outcome = "error"
	}
	m.store.WithLabelValues(kind, outcome).Observe(d.Seconds())
}

// ObserveWrite records a write transaction: the Updates it carried and
// how long it held the store's writer.
func (m *Metrics) ObserveWrite(updates int, held time.Duration) {
	m.writeTxs.Inc()
	m.writeUpdates.Add(float64(updates))
	m.writeBusy.Add(held.Seconds())
}

// ObserveRetry records a write transaction run again.
func (m *Metrics) ObserveRetry() { m.writeRetries.Inc() }

// ObservePass records a placement pass of a kind (control.PassKind):
// how long it waited for the placement lock and how long it ran.
func (m *Metrics) ObservePass(pass string, waited, ran time.Duration) {
	m.passWait.WithLabelValues(pass).Observe(waited.Seconds())
	m.passRun.WithLabelValues(pass).Observe(ran.Seconds())
}

// stateCollector reads the state at each scrape: nodes by state, queued
// jobs and the cost rate per cluster.
type stateCollector struct {
	svc *service.Services
	m   *Metrics
}

var (
	nodesDesc  = prometheus.NewDesc("shoal_nodes", "Nodes by cluster and state.", []string{"workspace", "compute", "state"}, nil)
	queueDesc  = prometheus.NewDesc("shoal_queued_jobs", "Queued jobs by cluster.", []string{"workspace", "compute"}, nil)
	demandDesc = prometheus.NewDesc("shoal_queued_node_demand", "Nodes the queued jobs of a cluster need.", []string{"workspace", "compute"}, nil)
	costDesc   = prometheus.NewDesc("shoal_cost_rate_usd_per_hour", "What a cluster's nodes cost per hour now (list prices).", []string{"workspace", "compute"}, nil)
	oldestDesc = prometheus.NewDesc("shoal_queue_oldest_wait_seconds", "How long a cluster's longest-queued job has waited since its submission (0: none queued).", []string{"workspace", "compute"}, nil)
	provDesc   = prometheus.NewDesc("shoal_node_provisioning_oldest_seconds", "How long a cluster's oldest node still provisioning (not joined) has been (0: none).", []string{"workspace", "compute"}, nil)
)

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- nodesDesc
	ch <- queueDesc
	ch <- demandDesc
	ch <- costDesc
	ch <- oldestDesc
	ch <- provDesc
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	snap, err := c.svc.MetricsSnapshot(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(nodesDesc, err)
		return
	}
	for _, cl := range snap {
		c.m.zeroCounters(cl.Workspace, cl.Compute)
		for _, st := range []string{node.NodePreparing, node.NodeIdle, node.NodeRunning, node.NodeLeaving, node.NodeUnusable, node.NodePreempted} {
			ch <- prometheus.MustNewConstMetric(nodesDesc, prometheus.GaugeValue, float64(cl.Nodes[st]), cl.Workspace, cl.Compute, st)
		}
		ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(cl.Queued), cl.Workspace, cl.Compute)
		ch <- prometheus.MustNewConstMetric(demandDesc, prometheus.GaugeValue, float64(cl.Demand), cl.Workspace, cl.Compute)
		ch <- prometheus.MustNewConstMetric(costDesc, prometheus.GaugeValue, cl.CostPerHour, cl.Workspace, cl.Compute)
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, cl.OldestQueuedWait.Seconds(), cl.Workspace, cl.Compute)
		ch <- prometheus.MustNewConstMetric(provDesc, prometheus.GaugeValue, cl.OldestProvisioning.Seconds(), cl.Workspace, cl.Compute)
	}
}
