package app

import (
	"context"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/shoal-ml/shoal/control/delivery"
	ctlnotify "github.com/shoal-ml/shoal/control/notify"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/service/webhooks"
	storekind "github.com/shoal-ml/shoal/store"
)

// notifications are the notifier (events to deliveries) and the sender
// (deliveries to receivers); they run on a goroutine of their own while
// this server leads (runNotifications), so that a slow receiver or a
// flood of events never delays a decision.
type notifications struct {
	notifier *ctlnotify.Notifier
	sender   *delivery.Sender
}

// notificationMetrics are the counters the notifier and sender feed
// (server/metrics' shoal_notifications_dropped_total and _failed_total).
type notificationMetrics interface {
	NotificationDropped(workspace string)
	NotificationFailed(workspace, channel string)
}

// newNotifications builds the notifier and the sender from the config's
// notifications section; met is the server's metrics, counted when
// they have the notification counters.
func newNotifications(n *config.Notifications, st storekind.Store, key *sealing.Key, publicURL string, met any) *notifications {
	nc := ctlnotify.Config{Store: st, PublicURL: publicURL}
	dc := delivery.Config{
		Store:      st,
		OpenSecret: func(tx storekind.Tx, ws, name string) ([]byte, error) { return webhooks.OpenSecret(tx, key, ws, name) },
		HTTP:       webhooks.NewHTTPClient(n.AllowPrivateWebhookURLs, delivery.DefaultTryTimeout),
	}
	if n.SMTP != nil {
		dc.Mail = delivery.NewMailer(*n.SMTP, nil)
	}
	if m, ok := met.(notificationMetrics); ok {
		nc.Dropped, dc.Failed = m.NotificationDropped, m.NotificationFailed
	}
	return &notifications{notifier: ctlnotify.New(nc), sender: delivery.New(dc)}
}

// notificationGap spaces the notification passes that find nothing to
// do; a pass that sent a full batch is followed at once.
const notificationGap = time.Second

// runNotifications queues and sends notifications until ctx ends.
func (m *Main) runNotifications(ctx context.Context) {
	if m.notif == nil {
		return
	}
	for {
		busy := m.notificationPass(ctx)
		gap := notificationGap
		if busy {
			gap = minPlacementGap
		}
		if !sleepCtx(ctx, gap) {
			return
		}
	}
}

// notificationPass runs the notifier then the sender once at the
// injected clock's now; it reports whether the sender had a full batch.
func (m *Main) notificationPass(ctx context.Context) (busy bool) {
	defer func() {
		if r := recover(); r != nil {
			m.log.Error("notification pass panicked", slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
		}
	}()
	now := m.opts.Clock.Now()
	if _, err := m.notif.notifier.RunOnce(ctx, now); err != nil && ctx.Err() == nil {
		m.log.Error("notifier pass failed", slog.Any("err", err))
	}
	n, err := m.notif.sender.RunOnce(ctx, m.opts.Clock.Now())
	if err != nil && ctx.Err() == nil {
		m.log.Error("notification sender pass failed", slog.Any("err", err))
	}
	return n >= delivery.DefaultBatch
}
