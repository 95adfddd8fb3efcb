// Package watch is the control loop that turns conditions into events,
// once each, for the notifier and for people reading event logs: a job
// queued longer than a threshold, a running job whose GPUs stay under a
// utilisation threshold for a window, a node provisioning longer than a
// threshold, and an instance that idle shutdown will stop soon. (A node
// lost is recorded by the node loop as it declares the loss, and budget
// crossings by the accounting loop.)
//
// "Once" survives restarts and failovers: each condition is decided and
// recorded in one store transaction, under the leader's fence, with a
// mark the next pass reads — a cursor of the times already handled
// (queue, provisioning) or the event itself (GPUs, instances).
package watch

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

// Services is what the watch loop needs of the request services.
// *service.Services implements it.
type Services interface {
	// Store is the (audited) store the loop reads and writes.
	Store() store.Store
	// Logger is where the loop logs what it could not do.
	Logger() *slog.Logger
	// OverlayIdle puts an instance's idle clock as the instance loop
	// last kept it in memory (it writes it now and then) onto comp.
	OverlayIdle(comp *compute.Compute)
}

// Thresholds are the server's notifications thresholds
// (server/config.Notifications); zero values take the defaults.
type Thresholds struct {
	// QueueWait: a job queued longer is a queued_too_long event.
	QueueWait time.Duration
	// GPUIdlePercent and GPUIdleWindow: a running job whose samples'
	// mean utilisation stays under GPUIdlePercent for GPUIdleWindow is a
	// gpu_underutilized event.
	GPUIdlePercent float64
	GPUIdleWindow  time.Duration
	// ProvisioningStuckAfter: a node provisioning longer is a
	// provisioning_stuck event.
	ProvisioningStuckAfter time.Duration
	// IdleShutdownWarning: an instance idle shutdown stops within it is
	// an idle_shutdown_soon event.
	IdleShutdownWarning time.Duration
	// IdleMinute is how long one idle minute lasts (the server's
	// instances.idle_minute; time.Minute when zero).
	IdleMinute time.Duration
}

// The defaults, as server/config's.
const (
	DefaultQueueWait              = 30 * time.Minute
	DefaultGPUIdlePercent         = 50.0
	DefaultGPUIdleWindow          = 30 * time.Minute
	DefaultProvisioningStuckAfter = 15 * time.Minute
	DefaultIdleShutdownWarning    = 10 * time.Minute
)

func (t Thresholds) withDefaults() Thresholds {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.QueueWait, DefaultQueueWait)
	def(&t.GPUIdleWindow, DefaultGPUIdleWindow)
	def(&t.ProvisioningStuckAfter, DefaultProvisioningStuckAfter)
	def(&t.IdleShutdownWarning, DefaultIdleShutdownWarning)
	def(&t.IdleMinute, time.Minute)
	if t.GPUIdlePercent <= 0 {
		t.GPUIdlePercent = DefaultGPUIdlePercent
	}
	return t
}

// Every is how often the loop looks: a controller pass more often than
// that watches nothing (the conditions are minutes long; reading the
// queue and the running jobs' samples on every pass would cost more than
// it tells).
const Every = 15 * time.Second

// Gauges receives, after each pass, what the loop read that the metrics
// export: the last GPU sample of each running job.
type Gauges interface {
	SetJobGPUUtilization(samples []GPUUtilization)
}

// GPUUtilization is a running job's last GPU sample: the mean
// utilisation of its GPUs in percent.
type GPUUtilization struct {
	Workspace, Compute, Job string
	Percent                 float64
}

// principal is who the loop's events are recorded as.
var principal = identity.SystemPrincipal("watch")

// Loop is the watch loop's state between passes.
type Loop struct {
	s  Services
	th Thresholds

	mu     sync.Mutex
	last   time.Time
	gauges Gauges
}

// New returns the watch loop over s with thresholds th.
func New(s Services, th Thresholds) *Loop { return &Loop{s: s, th: th.withDefaults()} }

// SetThresholds replaces the thresholds (the server's config, read after
// the controller is built).
func (l *Loop) SetThresholds(th Thresholds) {
	l.mu.Lock()
	l.th = th.withDefaults()
	l.mu.Unlock()
}

// SetGauges installs where the loop's readings go (the server's metrics).
func (l *Loop) SetGauges(g Gauges) {
	l.mu.Lock()
	l.gauges = g
	l.mu.Unlock()
}

// RunOnce looks at every watched condition at now, at most once per
// Every, and records each one newly met as an event.
func (l *Loop) RunOnce(ctx context.Context, now time.Time) error {
	l.mu.Lock()
	if !l.last.IsZero() && now.Sub(l.last) < Every && !now.Before(l.last) {
		l.mu.Unlock()
		return nil
	}
	l.last = now
	th, gauges := l.th, l.gauges
	l.mu.Unlock()
	ctx = identity.WithPrincipal(ctx, principal)
	gpu, gpuErr := l.watchGPUs(ctx, now, th)
	if gauges != nil && gpuErr == nil {
		gauges.SetJobGPUUtilization(gpu)
	}
	return errors.Join(
		l.watchQueue(ctx, now, th),
		gpuErr,
		l.watchProvisioning(ctx, now, th),
		l.watchInstances(ctx, now, th),
	)
}
