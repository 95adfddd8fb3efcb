package store

import (
	"time"

	"github.com/shoal-ml/shoal/domain/notify"
)

// NotifyTx is the part of Tx that keeps webhooks, the deliveries of
// notifications and the notifier's place in the event log.
type NotifyTx interface {
	// PutWebhook creates a workspace's webhook or replaces the one of
	// the same name; sealedSecret is its signing secret sealed (nil
	// keeps the stored one).
	PutWebhook(w *notify.Webhook, sealedSecret []byte) error
	// GetWebhook returns a webhook. Returns ENOTFOUND.
	GetWebhook(workspace, name string) (*notify.Webhook, error)
	// WebhookSecret returns a webhook's sealed signing secret. Returns
	// ENOTFOUND.
	WebhookSecret(workspace, name string) ([]byte, error)
	// ListWebhooks returns a workspace's webhooks ordered by name;
	// workspace "" lists every workspace's.
	ListWebhooks(workspace string) ([]*notify.Webhook, error)
	// DeleteWebhook removes a webhook and its deliveries. Returns
	// ENOTFOUND.
	DeleteWebhook(workspace, name string) error
	// AddWebhookDropped adds n to a webhook's count of dropped
	// deliveries.
	AddWebhookDropped(workspace, name string, n int64) error

	// InsertDelivery adds a pending delivery and sets its ID; one with
	// the same workspace, webhook, target and key already stored is not
	// added again (inserted false), so an event is delivered at most
	// once to each receiver.
	InsertDelivery(d *notify.Delivery) (inserted bool, err error)
	// CountPendingDeliveries counts a receiver's pending deliveries
	// (webhook "" with target: a job's notification mail).
	CountPendingDeliveries(workspace, webhook string) (int, error)
	// DueDeliveries returns up to limit pending deliveries whose next
	// attempt is at or before now, oldest first.
	DueDeliveries(now time.Time, limit int) ([]*notify.Delivery, error)
	// UpdateDelivery records a try's outcome (status, attempts, next
	// attempt, error). Returns ENOTFOUND.
	UpdateDelivery(d *notify.Delivery) error
	// ListDeliveries returns a workspace's deliveries, newest first, of
	// one webhook ("" : all), at most limit (0: no cap).
	ListDeliveries(workspace, webhook string, limit int) ([]*notify.Delivery, error)
	// PruneDeliveries removes finished deliveries (delivered, failed,
	// dropped) last updated before before; returns how many.
	PruneDeliveries(before time.Time) (int, error)
	// TrimDeliveries removes each receiver's finished deliveries but its
	// newest keep (a receiver: workspace, webhook and target), so that a
	// fast receiver of a flood of events fills no disk before Retention
	// prunes them; returns how many.
	TrimDeliveries(keep int) (int, error)

	// NotifyCursor returns a named position in the event log (0 when
	// never set); SetNotifyCursor moves it.
	NotifyCursor(name string) (int64, error)
	SetNotifyCursor(name string, id int64) error
}
