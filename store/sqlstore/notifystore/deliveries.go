package notifystore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/notify"
)

// A delivery is a row of the columns its queries filter and sort on
// beside the whole delivery as JSON; the ID is the row's own.

const deliveryColumns = `id, doc`

func scanDelivery(sc scanner) (*notify.Delivery, error) {
	var (
		id  int64
		doc []byte
		d   notify.Delivery
	)
	if err := sc.Scan(&id, &doc); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("decode delivery %d: %w", id, err)
	}
	d.ID = id
	return &d, nil
}

func listDeliveries(q Querier, what, query string, args ...any) ([]*notify.Delivery, error) {
	rows, err := q.Query(query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	defer rows.Close()
	out := []*notify.Delivery{}
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, fmt.Errorf("store: %s: %w", what, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	return out, nil
}

func micros(t time.Time) int64 { return t.UnixMicro() }

// normDelivery sets d's times to their stored form.
func normDelivery(d *notify.Delivery) {
	d.CreatedOn, d.UpdatedOn, d.NextAttempt = stored(d.CreatedOn), stored(d.UpdatedOn), stored(d.NextAttempt)
	if d.Delivered != nil {
		t := stored(*d.Delivered)
		d.Delivered = &t
	}
}

// InsertDelivery adds a pending delivery created now (a zero NextAttempt:
// due now; an empty Status: pending) and sets its ID; one already stored
// for the same workspace, webhook, target and key is not added again
// (inserted false, d's ID left as it was).
func InsertDelivery(q Querier, d *notify.Delivery, now time.Time) (bool, error) {
	if d.Status == "" {
		d.Status = notify.DeliveryPending
	}
	if d.NextAttempt.IsZero() {
		d.NextAttempt = now
	}
	d.CreatedOn, d.UpdatedOn = now, now
	normDelivery(d)
	doc, err := json.Marshal(d)
	if err != nil {
		return false, fmt.Errorf("store: encode delivery: %w", err)
	}
	var id int64
	err = q.QueryRow(`INSERT INTO notify_deliveries (workspace_key, webhook_key, target, event_key, status, next_attempt, updated_on, doc)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (workspace_key, webhook_key, target, event_key) DO NOTHING RETURNING id`,
		key(d.Workspace), key(d.Webhook), d.Target, d.Key, d.Status, micros(d.NextAttempt), micros(d.UpdatedOn), string(doc)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: insert delivery of %s to %q in %s: %w", d.Event, d.Webhook, d.Workspace, err)
	}
	d.ID = id
	return true, nil
}

// CountPendingDeliveries counts a receiver's pending deliveries (webhook
// "": the workspace's notification mails).
func CountPendingDeliveries(q Querier, workspace, webhook string) (int, error) {
	var n int
	if err := q.QueryRow(`SELECT COUNT(*) FROM notify_deliveries WHERE workspace_key = $1 AND webhook_key = $2 AND status = $3`,
		key(workspace), key(webhook), notify.DeliveryPending).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count pending deliveries of %q in %s: %w", webhook, workspace, err)
	}
	return n, nil
}

// DueDeliveries returns up to limit pending deliveries whose next attempt
// is at or before now, the longest due first.
func DueDeliveries(q Querier, now time.Time, limit int) ([]*notify.Delivery, error) {
	return listDeliveries(q, "due deliveries", `SELECT `+deliveryColumns+` FROM notify_deliveries
		WHERE status = $1 AND next_attempt <= $2 ORDER BY next_attempt, id LIMIT $3`,
		notify.DeliveryPending, micros(now), limit)
}

// UpdateDelivery records a try's outcome: d's Status, Attempts,
// NextAttempt, LastError, StatusCode and Delivered, updated now; the
// rest of the stored delivery (its receiver, event, payload) stays as it
// was inserted. Returns ENOTFOUND.
func UpdateDelivery(q Querier, d *notify.Delivery, now time.Time) error {
	cur, err := scanDelivery(q.QueryRow(`SELECT `+deliveryColumns+` FROM notify_deliveries WHERE id = $1`, d.ID))
	if errors.Is(err, sql.ErrNoRows) {
		return core.Errorf(core.ENOTFOUND, "delivery %d not found", d.ID)
	}
	if err != nil {
		return fmt.Errorf("store: update delivery %d: %w", d.ID, err)
	}
	cur.Status, cur.Attempts, cur.NextAttempt = d.Status, d.Attempts, d.NextAttempt
	cur.LastError, cur.StatusCode, cur.Delivered = d.LastError, d.StatusCode, d.Delivered
	cur.UpdatedOn = now
	normDelivery(cur)
	doc, err := json.Marshal(cur)
	if err != nil {
		return fmt.Errorf("store: encode delivery %d: %w", d.ID, err)
	}
	if _, err := q.Exec(`UPDATE notify_deliveries SET status = $2, next_attempt = $3, updated_on = $4, doc = $5 WHERE id = $1`,
		d.ID, cur.Status, micros(cur.NextAttempt), micros(cur.UpdatedOn), string(doc)); err != nil {
		return fmt.Errorf("store: update delivery %d: %w", d.ID, err)
	}
	*d = *cur
	return nil
}

// ListDeliveries returns a workspace's deliveries, newest first, of one
// webhook ("" : all), at most limit (0: no cap).
func ListDeliveries(q Querier, workspace, webhook string, limit int) ([]*notify.Delivery, error) {
	if limit <= 0 {
		limit = math.MaxInt32 // PostgreSQL takes no negative LIMIT
	}
	what := fmt.Sprintf("list deliveries of %q in %s", webhook, workspace)
	if webhook == "" {
		return listDeliveries(q, what, `SELECT `+deliveryColumns+` FROM notify_deliveries
			WHERE workspace_key = $1 ORDER BY id DESC LIMIT $2`, key(workspace), limit)
	}
	return listDeliveries(q, what, `SELECT `+deliveryColumns+` FROM notify_deliveries
		WHERE workspace_key = $1 AND webhook_key = $2 ORDER BY id DESC LIMIT $3`, key(workspace), key(webhook), limit)
}

// PruneDeliveries removes finished deliveries (delivered, failed,
// dropped) last updated before before; returns how many.
func PruneDeliveries(q Querier, before time.Time) (int, error) {
	res, err := q.Exec(`DELETE FROM notify_deliveries WHERE status IN ($1, $2, $3) AND updated_on < $4`,
		notify.DeliveryDelivered, notify.DeliveryFailed, notify.DeliveryDropped, micros(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune deliveries: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// TrimDeliveries removes each receiver's finished deliveries (delivered,
// failed, dropped) but its newest keep; returns how many. A window
// function ranks them per receiver (SQLite and PostgreSQL both have
// ROW_NUMBER), newest first by id.
func TrimDeliveries(q Querier, keep int) (int, error) {
	if keep < 0 {
		keep = 0
	}
	res, err := q.Exec(`DELETE FROM notify_deliveries WHERE id IN (
		SELECT id FROM (
			SELECT id, ROW_NUMBER() OVER (PARTITION BY workspace_key, webhook_key, target ORDER BY id DESC) AS n
			FROM notify_deliveries WHERE status IN ($1, $2, $3)
		) ranked WHERE n > $4)`,
		notify.DeliveryDelivered, notify.DeliveryFailed, notify.DeliveryDropped, keep)
	if err != nil {
		return 0, fmt.Errorf("store: trim deliveries: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// NotifyCursor returns a named position in the event log (0 when never
// set).
func NotifyCursor(q Querier, name string) (int64, error) {
	var v int64
	err := q.QueryRow(`SELECT value FROM notify_cursors WHERE name = $1`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: read cursor %s: %w", name, err)
	}
	return v, nil
}

// SetNotifyCursor moves a named position in the event log.
func SetNotifyCursor(q Querier, name string, id int64) error {
	if _, err := q.Exec(`INSERT INTO notify_cursors (name, value) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, id); err != nil {
		return fmt.Errorf("store: move cursor %s: %w", name, err)
	}
	return nil
}
