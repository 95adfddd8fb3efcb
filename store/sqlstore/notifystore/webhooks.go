// Package notifystore holds the queries of notifications (migration
// 0038): webhooks, their deliveries and the notifier's cursors, for both
// SQL stores. Package sqlstore's transaction methods delegate here
// through Querier, so that its own package does not grow. A webhook's
// signing secret is kept sealed in a column of its own, so that a
// document read for a list never holds it.
package notifystore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/notify"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// Querier is what the queries need of a transaction.
type Querier = sqlq.Querier

var (
	key    = sqlq.Key
	stored = sqlq.Stored
)

func notFound(workspace, name string) error {
	return &core.Error{Code: core.ENOTFOUND, Field: "name",
		Message: fmt.Sprintf("webhook %s is not in workspace %s; see `shoal webhook list`", name, workspace)}
}

// PutWebhook creates or replaces a workspace's webhook; a zero CreatedOn
// takes now. sealedSecret nil (or empty) keeps the stored secret.
func PutWebhook(q Querier, w *notify.Webhook, sealedSecret []byte, now time.Time) error {
	if w.CreatedOn.IsZero() {
		w.CreatedOn = now
	}
	w.CreatedOn = stored(w.CreatedOn)
	doc, err := json.Marshal(w)
	if err != nil {
		return fmt.Errorf("store: encode webhook %s: %w", w.Name, err)
	}
	if _, err := q.Exec(`INSERT INTO webhooks (workspace_key, name_key, workspace, sealed_secret, doc) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (workspace_key, name_key) DO UPDATE SET workspace = excluded.workspace, doc = excluded.doc,
			sealed_secret = CASE WHEN excluded.sealed_secret = '' THEN webhooks.sealed_secret ELSE excluded.sealed_secret END`,
		key(w.Workspace), key(w.Name), w.Workspace, string(sealedSecret), string(doc)); err != nil {
		return fmt.Errorf("store: put webhook %s in %s: %w", w.Name, w.Workspace, err)
	}
	return nil
}

type scanner interface{ Scan(...any) error }

func scanWebhook(sc scanner) (*notify.Webhook, error) {
	var (
		ws  string
		doc []byte
		w   notify.Webhook
	)
	if err := sc.Scan(&ws, &doc); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(doc, &w); err != nil {
		return nil, fmt.Errorf("decode webhook: %w", err)
	}
	w.Workspace = ws
	return &w, nil
}

// GetWebhook returns a workspace's webhook. Returns ENOTFOUND.
func GetWebhook(q Querier, workspace, name string) (*notify.Webhook, error) {
	w, err := scanWebhook(q.QueryRow(`SELECT workspace, doc FROM webhooks WHERE workspace_key = $1 AND name_key = $2`, key(workspace), key(name)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(workspace, name)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get webhook %s in %s: %w", name, workspace, err)
	}
	return w, nil
}

// WebhookSecret returns a webhook's sealed secret. Returns ENOTFOUND.
func WebhookSecret(q Querier, workspace, name string) ([]byte, error) {
	var sealed string
	err := q.QueryRow(`SELECT sealed_secret FROM webhooks WHERE workspace_key = $1 AND name_key = $2`, key(workspace), key(name)).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(workspace, name)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get the secret of webhook %s in %s: %w", name, workspace, err)
	}
	return []byte(sealed), nil
}

// ListWebhooks returns a workspace's webhooks ordered by name; workspace
// "" lists every workspace's, by workspace then name.
func ListWebhooks(q Querier, workspace string) ([]*notify.Webhook, error) {
	var (
		rows *sql.Rows
		err  error
	)
	if workspace == "" {
		rows, err = q.Query(`SELECT workspace, doc FROM webhooks ORDER BY workspace_key, name_key`)
	} else {
		rows, err = q.Query(`SELECT workspace, doc FROM webhooks WHERE workspace_key = $1 ORDER BY name_key`, key(workspace))
	}
	if err != nil {
		return nil, fmt.Errorf("store: list webhooks of %q: %w", workspace, err)
	}
	defer rows.Close()
	out := []*notify.Webhook{}
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list webhooks of %q: %w", workspace, err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// DeleteWebhook removes a webhook and its deliveries. Returns ENOTFOUND.
func DeleteWebhook(q Querier, workspace, name string) error {
	res, err := q.Exec(`DELETE FROM webhooks WHERE workspace_key = $1 AND name_key = $2`, key(workspace), key(name))
	if err != nil {
		return fmt.Errorf("store: delete webhook %s in %s: %w", name, workspace, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return notFound(workspace, name)
	}
	if _, err := q.Exec(`DELETE FROM notify_deliveries WHERE workspace_key = $1 AND webhook_key = $2`, key(workspace), key(name)); err != nil {
		return fmt.Errorf("store: delete the deliveries of webhook %s in %s: %w", name, workspace, err)
	}
	return nil
}

// AddWebhookDropped adds n to a webhook's count of dropped deliveries.
// Returns ENOTFOUND.
func AddWebhookDropped(q Querier, workspace, name string, n int64) error {
	w, err := GetWebhook(q, workspace, name)
	if err != nil {
		return err
	}
	w.Dropped += n
	doc, err := json.Marshal(w)
	if err != nil {
		return fmt.Errorf("store: encode webhook %s: %w", w.Name, err)
	}
	if _, err := q.Exec(`UPDATE webhooks SET doc = $3 WHERE workspace_key = $1 AND name_key = $2`, key(workspace), key(name), string(doc)); err != nil {
		return fmt.Errorf("store: count dropped deliveries of webhook %s in %s: %w", name, workspace, err)
	}
	return nil
}
