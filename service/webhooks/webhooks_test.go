package webhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/notify"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/webhooks"
	"github.com/shoal-ml/shoal/store"
)

// fakeDNS is the one fake here: no test may reach a real DNS server, so
// the names a URL may carry are looked up in this table (the system's
// resolver is what the server uses). A name not in it does not resolve.
func fakeDNS(names map[string]string) webhooks.Resolver {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		a, ok := names[strings.ToLower(host)]
		if !ok {
			return nil, errors.New("no such host")
		}
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
}

var dns = fakeDNS(map[string]string{
	"hooks.example.com":   "203.0.113.7",
	"rebind.example.com":  "127.0.0.1",
	"metadata.example":    "169.254.169.254",
	"mapped.example.com":  "::ffff:127.0.0.1",
	"private.example.com": "10.1.2.3",
})

type env struct {
	svc  *webhooks.Service
	key  *sealing.Key
	db   store.Store
	ctx  context.Context
	conf webhooks.Config
}

func newEnv(t *testing.T, mod func(*webhooks.Config)) *env {
	t.Helper()
	db, clock := teststore.Open(t)
	key, err := sealing.LoadOrCreate(filepath.Join(t.TempDir(), "k.key"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := webhooks.Config{Store: db, SecretsKey: key, Clock: clock, Resolve: dns}
	if mod != nil {
		mod(&cfg)
	}
	ctx := identity.WithPrincipal(context.Background(), &identity.Principal{ID: "user:olive", Name: "olive"})
	return &env{svc: webhooks.New(cfg), key: key, db: db, ctx: ctx, conf: cfg}
}

func wantField(t *testing.T, what string, err error, field, words string) {
	t.Helper()
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != core.EINVALID || ce.Field != field || !strings.Contains(err.Error(), words) {
		t.Errorf("%s: %v, want an invalid %s saying %q", what, err, field, words)
	}
}

// A URL that reaches the server itself — the loopback by address or by
// name, the metadata address, the unspecified address, a name that
// resolves to one of them — is refused at create with a field error
// naming url; so are a URL with a user or password, a scheme other than
// https, a number that is not a plain address.
func TestCreateRefusesURLsThatReachTheServer(t *testing.T) {
	e := newEnv(t, nil)
	for _, c := range []struct{ url, words string }{
		{"https://127.0.0.1/hook", "loopback"},
		{"https://127.9.9.9:8443/hook", "loopback"},
		{"https://[::1]/hook", "loopback"},
		{"https://[::ffff:127.0.0.1]/hook", "loopback"},
		{"https://localhost/hook", "names the loopback"},
		{"https://LOCALHOST./hook", "names the loopback"},
		{"https://api.localhost:8080/hook", "names the loopback"},
		{"https://169.254.169.254/latest/meta-data/", "link-local"},
		{"https://[fe80::1]/hook", "link-local"},
		{"https://0.0.0.0/hook", "unspecified"},
		{"https://[::]/hook", "unspecified"},
		{"https://127.1/hook", "not a plain IP address"},
		{"https://2130706433/hook", "not a plain IP address"},
		{"https://0x7f.0x0.0x0.0x1/hook", "not a plain IP address"},
		{"https://rebind.example.com/hook", "127.0.0.1"},
		{"https://mapped.example.com/hook", "loopback"},
		{"https://metadata.example/hook", "link-local"},
		{"https://nowhere.example.com/hook", "does not resolve"},
		{"https://user:pw@hooks.example.com/hook", "user or password"},
		{"http://hooks.example.com/hook", "must be https"},
		{"ftp://hooks.example.com/hook", "https"},
		{"file:///etc/passwd", "https"},
		{"https:///hook", "no host"},
		{"hooks.example.com/hook", "https"},
		{"https://hooks.example.com/hook#frag", "fragment"},
		{"https://hooks.example.com/" + strings.Repeat("a", 2100), "more than"},
		{"https://hooks.example.com/\r\nX-Injected: 1", "not a URL"},
		{"https://[fe80::1%25eth0]/hook", "link-local"},
		{"https://[::ffff:169.254.169.254]/hook", "link-local"},
		{"https://hooks.example.com@127.0.0.1/hook", "user or password"},
		// AWS's IPv6 instance metadata address (a unique-local address,
		// so not caught as link-local), and addresses of the NAT64
		// prefix that carry a refused IPv4 address.
		{"https://[fd00:ec2::254]/latest/meta-data/", "metadata"},
		{"https://[64:ff9b::a9fe:a9fe]/latest/meta-data/", "link-local"},
		{"https://[64:ff9b::7f00:1]/hook", "loopback"},
	} {
		_, err := e.svc.Create(e.ctx, "ws", &webhooks.Create{Name: "h", URL: c.url, Events: []string{notify.JobFailed}})
		wantField(t, c.url, err, "url", c.words)
	}
	// Nothing was stored.
	if list, err := e.svc.List(e.ctx, "ws"); err != nil || len(list) != 0 {
		t.Errorf("after refusals: %v, %v", list, err)
	}
	// A public name, a private network's name: accepted.
	for i, u := range []string{"https://hooks.example.com/hook", "https://private.example.com:8443/x?y=1", "https://203.0.113.9/h"} {
		if _, err := e.svc.Create(e.ctx, "ws", &webhooks.Create{Name: "ok" + string(rune('a'+i)), URL: u, Events: []string{notify.JobFailed}}); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

// The server's config may allow the loopback (a lab, a test receiver) and
// http; each only when set.
func TestCreateAllowsPrivateAndHTTPOnlyWhenConfigured(t *testing.T) {
	e := newEnv(t, func(c *webhooks.Config) { c.AllowPrivate = true })
	if _, err := e.svc.Create(e.ctx, "ws", &webhooks.Create{Name: "lo", URL: "https://127.0.0.1:9/h", Events: []string{notify.JobFailed}}); err != nil {
		t.Errorf("loopback with allow_private_webhook_urls: %v", err)
	}
	_, err := e.svc.Create(e.ctx, "ws", &webhooks.Create{Name: "plain", URL: "http://127.0.0.1:9/h", Events: []string{notify.JobFailed}})
	wantField(t, "http without allow_http", err, "url", "must be https")
	e = newEnv(t, func(c *webhooks.Config) { c.AllowHTTP = true })
	if _, err := e.svc.Create(e.ctx, "ws", &webhooks.Create{Name: "plain", URL: "http://hooks.example.com/h", Events: []string{notify.JobFailed}}); err != nil {
		t.Errorf("http with allow_http: %v", err)
	}
	_, err = e.svc.Create(e.ctx, "ws", &webhooks.Create{Name: "lo", URL: "http://127.0.0.1:9/h", Events: []string{notify.JobFailed}})
	wantField(t, "loopback with allow_http alone", err, "url", "loopback")
}

// Names, events, emails and the choice of url or emails are checked,
// each error naming its field; a name taken (in any case) is a conflict.
func TestCreateRefusesBadInput(t *testing.T) {
	e := newEnv(t, nil)
	u := "https://hooks.example.com/h"
	for _, c := range []struct {
		what         string
		req          webhooks.Create
		field, words string
	}{
		{"no name", webhooks.Create{URL: u, Events: []string{notify.JobFailed}}, "name", "required"},
		{"bad name", webhooks.Create{Name: "a b", URL: u, Events: []string{notify.JobFailed}}, "name", "letter first"},
		{"long name", webhooks.Create{Name: strings.Repeat("a", 65), URL: u, Events: []string{notify.JobFailed}}, "name", "1 to 64"},
		{"no events", webhooks.Create{Name: "h", URL: u}, "events", "required"},
		{"unknown event", webhooks.Create{Name: "h", URL: u, Events: []string{"job_failed", "job_exploded"}}, "events", `"job_exploded" is not a notification event`},
		{"no receiver", webhooks.Create{Name: "h", Events: []string{notify.JobFailed}}, "url", "required"},
		{"both", webhooks.Create{Name: "h", URL: u, Emails: []string{"a@example.com"}, Events: []string{notify.JobFailed}}, "emails", "cannot go with url"},
		{"display name", webhooks.Create{Name: "h", Emails: []string{"Ann <a@example.com>"}, Events: []string{notify.JobFailed}}, "emails", "not a mail address"},
		{"header injection", webhooks.Create{Name: "h", Emails: []string{"a@example.com\r\nBcc: x@evil.example"}, Events: []string{notify.JobFailed}}, "emails", "not a mail address"},
		{"no at", webhooks.Create{Name: "h", Emails: []string{"nobody"}, Events: []string{notify.JobFailed}}, "emails", "not a mail address"},
		{"too many", webhooks.Create{Name: "h", Emails: strings.Split(strings.Repeat("a@example.com,", notify.MaxEmails+1), ",")[:notify.MaxEmails+1], Events: []string{notify.JobFailed}}, "emails", "more than the 20"},
		{"description", webhooks.Create{Name: "h", URL: u, Description: strings.Repeat("d", 1025), Events: []string{notify.JobFailed}}, "description", "more than 1024"},
	} {
		_, err := e.svc.Create(e.ctx, "ws", &c.req)
		wantField(t, c.what, err, c.field, c.words)
	}
	w, err := e.svc.Create(e.ctx, "ws", &webhooks.Create{Name: "Team", Emails: []string{"a@example.com"}, Events: []string{"JOB_CANCELLED", "job_canceled", "job_failed"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(w.Events, ",") != "job_canceled,job_failed" {
		t.Errorf("events = %v, want Azure's job_cancelled as job_canceled, once", w.Events)
	}
	_, err = e.svc.Create(e.ctx, "ws", &webhooks.Create{Name: "team", URL: u, Events: []string{notify.JobFailed}})
	if core.ErrorCode(err) != core.ECONFLICT {
		t.Errorf("a name taken: %v, want a conflict", err)
	}
	_, err = e.svc.Create(e.ctx, "nope", &webhooks.Create{Name: "h", URL: u, Events: []string{notify.JobFailed}})
	if core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("a workspace not there: %v", err)
	}
}

// The secret is random, shown once at create and never again: Get and
// List carry a hint alone, the store keeps it sealed (bound to the
// webhook: a sealed value copied to another does not open), and
// OpenSecret gives the sender the same bytes. Rotating replaces it.
func TestSecretShownOnceAndKeptSealed(t *testing.T) {
	e := newEnv(t, nil)
	c, err := e.svc.Create(e.ctx, "ws", &webhooks.Create{Name: "ops", URL: "https://hooks.example.com/h", Events: []string{notify.JobFailed}})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(c.Secret) {
		t.Fatalf("secret %q, want 32 random bytes in hex", c.Secret)
	}
	created, _ := json.Marshal(c)
	if !strings.Contains(string(created), `"secret":"`+c.Secret+`"`) || c.CreatedBy != "olive" || c.SecretHint != c.Secret[:4]+"…" {
		t.Errorf("create's answer %s lacks the secret, the creator or the hint", created)
	}
	other, err := e.svc.Create(e.ctx, "ws", &webhooks.Create{Name: "other", URL: "https://hooks.example.com/o", Events: []string{notify.JobFailed}})
	if err != nil {
		t.Fatal(err)
	}
	if other.Secret == c.Secret {
		t.Fatal("two webhooks got the same secret")
	}
	got, err := e.svc.Get(e.ctx, "ws", "OPS")
	if err != nil {
		t.Fatal(err)
	}
	list, err := e.svc.List(e.ctx, "ws")
	if err != nil {
		t.Fatal(err)
	}
	for what, v := range map[string]any{"Get": got, "List": list} {
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), c.Secret) || strings.Contains(string(b), `"secret"`) {
			t.Errorf("%s's JSON carries the secret: %s", what, b)
		}
	}
	err = e.db.Update(e.ctx, func(tx store.Tx) error {
		sealed, err := tx.WebhookSecret("ws", "ops")
		if err != nil {
			return err
		}
		if strings.Contains(string(sealed), c.Secret) || !sealing.IsSealed(string(sealed)) {
			t.Errorf("stored secret %q is not sealed", sealed)
		}
		opened, err := webhooks.OpenSecret(tx, e.key, "WS", "Ops")
		if err != nil {
			return err
		}
		if string(opened) != c.Secret {
			t.Errorf("OpenSecret = %q, want %q", opened, c.Secret)
		}
		// ops's sealed secret moved onto other's row does not open there.
		w, err := tx.GetWebhook("ws", "other")
		if err != nil {
			return err
		}
		if err := tx.PutWebhook(w, sealed); err != nil {
			return err
		}
		if _, err := webhooks.OpenSecret(tx, e.key, "ws", "other"); err == nil {
			t.Error("a sealed secret moved to another webhook opened")
		}
		if _, err := webhooks.OpenSecret(tx, e.key, "ws", "gone"); core.ErrorCode(err) != core.ENOTFOUND {
			t.Errorf("OpenSecret of no webhook: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.svc.RotateSecret(e.ctx, "ws", "ops")
	if err != nil {
		t.Fatal(err)
	}
	if r.Secret == c.Secret || len(r.Secret) != 64 {
		t.Errorf("rotated secret %q", r.Secret)
	}
	_ = e.db.View(e.ctx, func(tx store.Tx) error {
		opened, err := webhooks.OpenSecret(tx, e.key, "ws", "ops")
		if err != nil || string(opened) != r.Secret {
			t.Errorf("after rotating, OpenSecret = %q, %v, want the new secret", opened, err)
		}
		return nil
	})
	// A server without a secrets key keeps no webhook.
	nokey := newEnv(t, func(c *webhooks.Config) { c.SecretsKey = nil })
	if _, err := nokey.svc.Create(nokey.ctx, "ws", &webhooks.Create{Name: "h", URL: "https://hooks.example.com/h", Events: []string{notify.JobFailed}}); err == nil || !strings.Contains(err.Error(), "secrets key") {
		t.Errorf("create without a secrets key: %v", err)
	}
}

// Test enqueues a ping due now to the webhook's URL (or its addresses);
// deliveries list newest first and delete goes with the webhook.
func TestTestDeliveryAndDeliveriesAndDelete(t *testing.T) {
	e := newEnv(t, nil)
	if _, err := e.svc.Create(e.ctx, "ws", &webhooks.Create{Name: "ops", URL: "https://hooks.example.com/h", Events: []string{notify.JobFailed}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Create(e.ctx, "ws", &webhooks.Create{Name: "mail", Emails: []string{"a@example.com", "b@example.com"}, Events: []string{notify.JobFailed}}); err != nil {
		t.Fatal(err)
	}
	d1, err := e.svc.Test(e.ctx, "ws", "ops")
	if err != nil {
		t.Fatal(err)
	}
	d2, err := e.svc.Test(e.ctx, "ws", "ops")
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.svc.Test(e.ctx, "ws", "mail")
	if err != nil {
		t.Fatal(err)
	}
	if d1.Event != webhooks.EventPing || d1.Channel != notify.ChannelWebhook || d1.Target != "https://hooks.example.com/h" || d1.Status != notify.DeliveryPending || d1.Key == d2.Key {
		t.Errorf("test delivery %+v", d1)
	}
	if m.Channel != notify.ChannelEmail || m.Target != "a@example.com,b@example.com" {
		t.Errorf("a mail webhook's test delivery %+v", m)
	}
	var p notify.Payload
	if err := json.Unmarshal(d1.Payload, &p); err != nil || p.Event != webhooks.EventPing || p.ResourceName != "ops" || !strings.Contains(p.Summary, "olive") {
		t.Errorf("payload %s: %v", d1.Payload, err)
	}
	list, err := e.svc.ListDeliveries(e.ctx, "ws", "ops", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != d2.ID || list[1].ID != d1.ID {
		t.Errorf("ListDeliveries = %+v, want d2, d1", list)
	}
	if one, _ := e.svc.ListDeliveries(e.ctx, "ws", "ops", 1); len(one) != 1 {
		t.Errorf("limit 1: %d", len(one))
	}
	if _, err := e.svc.ListDeliveries(e.ctx, "ws", "nope", 0); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("deliveries of no webhook: %v", err)
	}
	if _, err := e.svc.Test(e.ctx, "ws", "nope"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("test of no webhook: %v", err)
	}
	if err := e.svc.Delete(e.ctx, "ws", "OPS"); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Delete(e.ctx, "ws", "ops"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("delete again: %v", err)
	}
}

// One workspace holds at most MaxWebhooks webhooks, and a webhook with
// MaxPendingTests deliveries pending takes no more test deliveries: an
// Owner's loop fills neither the store nor a receiver's queue.
func TestBounds(t *testing.T) {
	e := newEnv(t, nil)
	err := e.db.Update(e.ctx, func(tx store.Tx) error {
		for i := range webhooks.MaxWebhooks {
			if err := tx.PutWebhook(&notify.Webhook{Workspace: "ws", Name: fmt.Sprintf("h%d", i), URL: "https://203.0.113.7/h", Events: []string{notify.JobFailed}}, []byte("s")); err != nil {
				return err
			}
		}
		for i := range webhooks.MaxPendingTests {
			d := &notify.Delivery{Workspace: "ws", Webhook: "h0", Channel: notify.ChannelWebhook, Target: "https://203.0.113.7/h", Event: webhooks.EventPing, Key: fmt.Sprint(i), Payload: json.RawMessage(`{}`)}
			if _, err := tx.InsertDelivery(d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Create(e.ctx, "ws", &webhooks.Create{Name: "one-more", URL: "https://203.0.113.7/h", Events: []string{notify.JobFailed}})
	if core.ErrorCode(err) != core.EQUOTA || !strings.Contains(err.Error(), "100 webhooks") {
		t.Errorf("webhook 101: %v", err)
	}
	if _, err := e.svc.Test(e.ctx, "ws", "h0"); core.ErrorCode(err) != core.EQUOTA || !strings.Contains(err.Error(), "1000 deliveries pending") {
		t.Errorf("a test with 1000 pending: %v", err)
	}
	if _, err := e.svc.Test(e.ctx, "ws", "h1"); err != nil {
		t.Errorf("a test of another webhook: %v", err)
	}
}
