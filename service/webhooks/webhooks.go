// Package webhooks is the request service of a workspace's webhooks
// (`shoal webhook create|list|show|delete|deliveries|test`): what a
// workspace Owner subscribes to and where it is sent, each webhook's
// signing secret (random, sealed by the server's secrets key, shown once
// at create), and the URL rule that keeps the server's POSTs off the
// loopback and the metadata address (CheckURL at create, Dialer at
// connect time). The notifier and the sender (control/notify,
// control/delivery) read webhooks from the store and the secret through
// OpenSecret.
package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/notify"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/store"
)

// Config configures a Service.
type Config struct {
	Store store.Store
	// SecretsKey seals the signing secrets; nil: the server keeps no
	// webhook, and says so.
	SecretsKey *sealing.Key
	// Clock stamps test deliveries; nil: the wall clock.
	Clock core.Clock
	// Random makes secrets and test deliveries' keys; nil: crypto/rand.
	Random io.Reader
	// AllowPrivate is notifications.allow_private_webhook_urls: URLs on
	// the loopback, link-local (metadata) or unspecified addresses are
	// accepted (a lab, a test's receiver).
	AllowPrivate bool
	// AllowHTTP accepts http:// URLs (the body travels in clear; its
	// signature still proves who sent it).
	AllowHTTP bool
	// Resolve looks a URL's host up at create; nil: the system's
	// resolver.
	Resolve Resolver
}

// Service keeps a workspace's webhooks.
type Service struct{ cfg Config }

// New returns a Service over cfg.
func New(cfg Config) *Service {
	if cfg.Clock == nil {
		cfg.Clock = core.SystemClock{}
	}
	if cfg.Random == nil {
		cfg.Random = rand.Reader
	}
	if cfg.Resolve == nil {
		cfg.Resolve = defaultResolver
	}
	return &Service{cfg: cfg}
}

// Create is the body of a webhook's create.
type Create = notify.WebhookCreate

// Created is a new webhook with its secret (create, rotate).
type Created = notify.WebhookCreated

// MaxDescription bounds a webhook's description.
const MaxDescription = 1024

// MaxWebhooks bounds a workspace's webhooks, so that one event cannot
// fan out into unbounded deliveries.
const MaxWebhooks = 100

// MaxPendingTests: a test delivery is refused while a webhook has this
// many deliveries pending (the notifier drops events past the same
// number), so that `shoal webhook test` in a loop fills no disk.
const MaxPendingTests = 1000

// SealContext binds a webhook's sealed secret to its workspace and name,
// so that a sealed value moved to another row does not open.
func SealContext(workspace, name string) string {
	return "webhook/" + strings.ToLower(workspace) + "/" + strings.ToLower(name)
}

func noSecretsKey() error {
	return core.Errorf(core.EINVALID, "this server has no secrets key, and webhook secrets are only ever stored encrypted: set secrets_key_file in the server's config (default <data-dir>/keys/workload.key) and restart it")
}

// validate checks req and returns its events canonical.
func (s *Service) validate(ctx context.Context, req *Create) ([]string, error) {
	if err := notify.ValidateWebhookName(req.Name); err != nil {
		return nil, err
	}
	if len(req.Description) > MaxDescription {
		return nil, core.FieldErrorf("description", "is %d characters, more than %d", len(req.Description), MaxDescription)
	}
	events, err := notify.CheckEvents("events", req.Events)
	if err != nil {
		return nil, err
	}
	switch {
	case req.URL == "" && len(req.Emails) == 0:
		return nil, core.FieldErrorf("url", "is required: give a URL to POST to, or emails to mail")
	case req.URL != "" && len(req.Emails) > 0:
		return nil, core.FieldErrorf("emails", "cannot go with url: a webhook either POSTs to a URL or mails addresses; create two")
	case len(req.Emails) > 0:
		return events, notify.CheckEmails("emails", req.Emails)
	}
	if err := CheckURL(req.URL, s.cfg.AllowPrivate); err != nil {
		return nil, err
	}
	if strings.HasPrefix(req.URL, "http:") && !s.cfg.AllowHTTP {
		return nil, core.FieldErrorf("url", "must be https:// (this server's config does not allow http webhooks: notifications.allow_http_webhook_urls)")
	}
	if !s.cfg.AllowPrivate {
		if err := checkResolved(ctx, s.cfg.Resolve, req.URL); err != nil {
			return nil, err
		}
	}
	return events, nil
}

// newSecret makes a signing secret: 32 random bytes, written in hex (the
// HMAC key is the hex text's bytes, so that a receiver uses the string as
// shown).
func (s *Service) newSecret() (string, error) {
	if s.cfg.SecretsKey == nil {
		return "", noSecretsKey()
	}
	raw := make([]byte, 32)
	if _, err := io.ReadFull(s.cfg.Random, raw); err != nil {
		return "", fmt.Errorf("make a webhook secret: %w", err)
	}
	return hex.EncodeToString(raw), nil
}

// Create registers a webhook in a workspace with a fresh secret; the
// answer is the only one that carries the secret. A name already taken is
// ECONFLICT.
func (s *Service) Create(ctx context.Context, workspace string, req *Create) (*Created, error) {
	events, err := s.validate(ctx, req)
	if err != nil {
		return nil, err
	}
	secret, err := s.newSecret()
	if err != nil {
		return nil, err
	}
	var out *Created
	err = s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		ws, err := tx.GetWorkspace(workspace)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return core.WorkspaceNotFound(workspace)
		} else if err != nil {
			return err
		}
		existing, err := tx.ListWebhooks(ws.Name)
		if err != nil {
			return err
		}
		if len(existing) >= MaxWebhooks {
			return core.Errorf(core.EQUOTA, "workspace %s has %d webhooks, the most it may have; delete one first", ws.Name, len(existing))
		}
		if _, err := tx.GetWebhook(ws.Name, req.Name); err == nil {
			return &core.Error{Code: core.ECONFLICT, Field: "name", Message: fmt.Sprintf("webhook %s already exists in workspace %s; delete it first, or choose another name", req.Name, ws.Name)}
		} else if core.ErrorCode(err) != core.ENOTFOUND {
			return err
		}
		w := &notify.Webhook{Workspace: ws.Name, Name: req.Name, Description: req.Description, URL: req.URL, Emails: req.Emails,
			Events: events, CreatedBy: identity.ActorName(ctx), SecretHint: secret[:4] + "…"}
		sealed, err := s.cfg.SecretsKey.Seal([]byte(secret), SealContext(w.Workspace, w.Name))
		if err != nil {
			return fmt.Errorf("seal the secret of webhook %s: %w", w.Name, err)
		}
		if err := tx.PutWebhook(w, []byte(sealed)); err != nil {
			return err
		}
		out = &Created{Webhook: w, Secret: secret}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RotateSecret gives a webhook a fresh secret, returned once as at
// create; deliveries sent from then on are signed with it.
func (s *Service) RotateSecret(ctx context.Context, workspace, name string) (*Created, error) {
	secret, err := s.newSecret()
	if err != nil {
		return nil, err
	}
	var out *Created
	err = s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		w, err := tx.GetWebhook(workspace, name)
		if err != nil {
			return err
		}
		sealed, err := s.cfg.SecretsKey.Seal([]byte(secret), SealContext(w.Workspace, w.Name))
		if err != nil {
			return fmt.Errorf("seal the secret of webhook %s: %w", w.Name, err)
		}
		w.SecretHint = secret[:4] + "…"
		if err := tx.PutWebhook(w, []byte(sealed)); err != nil {
			return err
		}
		out = &Created{Webhook: w, Secret: secret}
		return nil
	})
	return out, err
}

// Get returns a webhook (never its secret). Returns ENOTFOUND.
func (s *Service) Get(ctx context.Context, workspace, name string) (w *notify.Webhook, err error) {
	err = s.cfg.Store.View(ctx, func(tx store.Tx) error {
		w, err = tx.GetWebhook(workspace, name)
		return err
	})
	return w, err
}

// List returns a workspace's webhooks by name (never their secrets).
func (s *Service) List(ctx context.Context, workspace string) (out []*notify.Webhook, err error) {
	err = s.cfg.Store.View(ctx, func(tx store.Tx) error {
		if _, err := tx.GetWorkspace(workspace); core.ErrorCode(err) == core.ENOTFOUND {
			return core.WorkspaceNotFound(workspace)
		} else if err != nil {
			return err
		}
		out, err = tx.ListWebhooks(workspace)
		return err
	})
	return out, err
}

// Delete removes a webhook and its deliveries. Returns ENOTFOUND.
func (s *Service) Delete(ctx context.Context, workspace, name string) error {
	return s.cfg.Store.Update(ctx, func(tx store.Tx) error { return tx.DeleteWebhook(workspace, name) })
}

// MaxDeliveriesListed bounds a deliveries list.
const MaxDeliveriesListed = 1000

// ListDeliveries returns a webhook's deliveries, newest first, at most
// limit (0 or more than MaxDeliveriesListed: MaxDeliveriesListed).
// Returns ENOTFOUND for a webhook not there.
func (s *Service) ListDeliveries(ctx context.Context, workspace, name string, limit int) (out []*notify.Delivery, err error) {
	if limit <= 0 || limit > MaxDeliveriesListed {
		limit = MaxDeliveriesListed
	}
	err = s.cfg.Store.View(ctx, func(tx store.Tx) error {
		if _, err := tx.GetWebhook(workspace, name); err != nil {
			return err
		}
		out, err = tx.ListDeliveries(workspace, name, limit)
		return err
	})
	return out, err
}

// EventPing is the event of a test delivery (`shoal webhook test`).
const EventPing = "ping"

// Test enqueues a ping delivery to a webhook, due now: the sender signs
// and sends it as any other, and `shoal webhook deliveries` shows how it
// went. Returns the delivery.
func (s *Service) Test(ctx context.Context, workspace, name string) (*notify.Delivery, error) {
	nonce := make([]byte, 8)
	if _, err := io.ReadFull(s.cfg.Random, nonce); err != nil {
		return nil, fmt.Errorf("make a test delivery's key: %w", err)
	}
	now := s.cfg.Clock.Now()
	var out *notify.Delivery
	err := s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		w, err := tx.GetWebhook(workspace, name)
		if err != nil {
			return err
		}
		if n, err := tx.CountPendingDeliveries(w.Workspace, w.Name); err != nil {
			return err
		} else if n >= MaxPendingTests {
			return core.Errorf(core.EQUOTA, "webhook %s has %d deliveries pending; a test waits until its receiver catches up (see `shoal webhook deliveries -n %s`)", w.Name, n, w.Name)
		}
		key := EventPing + ":" + hex.EncodeToString(nonce)
		body, err := json.Marshal(notify.Payload{ID: key, Event: EventPing, Time: now, Workspace: w.Workspace, ResourceType: "webhook",
			ResourceName: w.Name, Summary: fmt.Sprintf("Test delivery of webhook %s, asked by %s", w.Name, identity.ActorName(ctx))})
		if err != nil {
			return err
		}
		d := &notify.Delivery{Workspace: w.Workspace, Webhook: w.Name, Channel: notify.ChannelWebhook, Target: w.URL,
			Event: EventPing, Key: key, Payload: body, NextAttempt: now}
		if w.URL == "" {
			d.Channel, d.Target = notify.ChannelEmail, strings.Join(w.Emails, ",")
		}
		if _, err := tx.InsertDelivery(d); err != nil {
			return err
		}
		out = d
		return nil
	})
	return out, err
}

// OpenSecret returns a webhook's signing secret, unsealed, for the
// sender to sign a delivery with (notify.Sign). It is read in tx, so the
// sender reads it beside the webhook it sends to. Returns ENOTFOUND.
func OpenSecret(tx store.Tx, key *sealing.Key, workspace, name string) ([]byte, error) {
	if key == nil {
		return nil, noSecretsKey()
	}
	w, err := tx.GetWebhook(workspace, name)
	if err != nil {
		return nil, err
	}
	sealed, err := tx.WebhookSecret(workspace, name)
	if err != nil {
		return nil, err
	}
	secret, err := key.Open(string(sealed), SealContext(w.Workspace, w.Name))
	if err != nil {
		return nil, fmt.Errorf("open the secret of webhook %s in %s: %w", name, workspace, err)
	}
	return secret, nil
}
