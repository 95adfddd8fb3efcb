package sqlstore

import (
	"time"

	"github.com/shoal-ml/shoal/domain/notify"
	"github.com/shoal-ml/shoal/store/sqlstore/notifystore"
)

// Webhooks, deliveries and the notifier's cursors: the queries are
// package notifystore's; these methods check that the transaction may
// write and hand it over with the transaction's time.

// PutWebhook creates or replaces a webhook; sealedSecret nil keeps the
// stored secret.
func (t *tx) PutWebhook(w *notify.Webhook, sealedSecret []byte) error {
	if err := t.writable("put webhook"); err != nil {
		return err
	}
	return notifystore.PutWebhook(querier{t}, w, sealedSecret, t.now)
}

// GetWebhook returns a webhook. Returns ENOTFOUND.
func (t *tx) GetWebhook(workspace, name string) (*notify.Webhook, error) {
	return notifystore.GetWebhook(querier{t}, workspace, name)
}

// WebhookSecret returns a webhook's sealed secret. Returns ENOTFOUND.
func (t *tx) WebhookSecret(workspace, name string) ([]byte, error) {
	return notifystore.WebhookSecret(querier{t}, workspace, name)
}

// ListWebhooks returns a workspace's webhooks ("": every workspace's).
func (t *tx) ListWebhooks(workspace string) ([]*notify.Webhook, error) {
	return notifystore.ListWebhooks(querier{t}, workspace)
}

// DeleteWebhook removes a webhook and its deliveries. Returns ENOTFOUND.
func (t *tx) DeleteWebhook(workspace, name string) error {
	if err := t.writable("delete webhook"); err != nil {
		return err
	}
	return notifystore.DeleteWebhook(querier{t}, workspace, name)
}

// AddWebhookDropped adds n to a webhook's dropped count.
func (t *tx) AddWebhookDropped(workspace, name string, n int64) error {
	if err := t.writable("count dropped deliveries"); err != nil {
		return err
	}
	return notifystore.AddWebhookDropped(querier{t}, workspace, name, n)
}

// InsertDelivery adds a pending delivery once per receiver and key.
func (t *tx) InsertDelivery(d *notify.Delivery) (bool, error) {
	if err := t.writable("insert delivery"); err != nil {
		return false, err
	}
	return notifystore.InsertDelivery(querier{t}, d, t.now)
}

// CountPendingDeliveries counts a receiver's pending deliveries.
func (t *tx) CountPendingDeliveries(workspace, webhook string) (int, error) {
	return notifystore.CountPendingDeliveries(querier{t}, workspace, webhook)
}

// DueDeliveries returns up to limit pending deliveries due at now.
func (t *tx) DueDeliveries(now time.Time, limit int) ([]*notify.Delivery, error) {
	return notifystore.DueDeliveries(querier{t}, now, limit)
}

// UpdateDelivery records a try's outcome. Returns ENOTFOUND.
func (t *tx) UpdateDelivery(d *notify.Delivery) error {
	if err := t.writable("update delivery"); err != nil {
		return err
	}
	return notifystore.UpdateDelivery(querier{t}, d, t.now)
}

// ListDeliveries returns a workspace's deliveries, newest first.
func (t *tx) ListDeliveries(workspace, webhook string, limit int) ([]*notify.Delivery, error) {
	return notifystore.ListDeliveries(querier{t}, workspace, webhook, limit)
}

// PruneDeliveries removes finished deliveries updated before before.
func (t *tx) PruneDeliveries(before time.Time) (int, error) {
	if err := t.writable("prune deliveries"); err != nil {
		return 0, err
	}
	return notifystore.PruneDeliveries(querier{t}, before)
}

// TrimDeliveries keeps each receiver's newest keep finished deliveries.
func (t *tx) TrimDeliveries(keep int) (int, error) {
	if err := t.writable("trim deliveries"); err != nil {
		return 0, err
	}
	return notifystore.TrimDeliveries(querier{t}, keep)
}

// NotifyCursor returns a named position in the event log.
func (t *tx) NotifyCursor(name string) (int64, error) {
	return notifystore.NotifyCursor(querier{t}, name)
}

// SetNotifyCursor moves a named position in the event log.
func (t *tx) SetNotifyCursor(name string, id int64) error {
	if err := t.writable("move notify cursor"); err != nil {
		return err
	}
	return notifystore.SetNotifyCursor(querier{t}, name, id)
}
