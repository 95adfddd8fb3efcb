package app

import (
	"github.com/shoal-ml/shoal/control/leader"
	"github.com/shoal-ml/shoal/control/watch"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/server/metrics"
)

// watchAlerts gives the watch loop the notifications thresholds of cfg
// and the gauges the alerts read (docs/operations/alerts.yml): the budget
// spend, running jobs' GPU samples and whether this server leads (always,
// alone on SQLite; while it holds the lease, with an elector).
func (m *Main) watchAlerts(cfg *config.Config, met *metrics.Metrics, e *leader.Elector) error {
	n, err := cfg.NotificationPolicy()
	if err != nil {
		return err
	}
	w := m.ctrl.Watch()
	w.SetThresholds(watch.Thresholds{QueueWait: n.QueueWaitThreshold, GPUIdlePercent: n.GPUIdleThresholdPercent, GPUIdleWindow: n.GPUIdleWindow,
		ProvisioningStuckAfter: n.ProvisioningStuckAfter, IdleShutdownWarning: n.IdleShutdownWarning, IdleMinute: m.svc.Config().IdleMinute})
	w.SetGauges(met)
	m.ctrl.Accounting().SetGauges(met)
	if e != nil {
		met.SetLeader(func() bool { return e.Status().Leading })
	}
	return nil
}
